// walstore-context-bench: what StoreContext (the Models module's unit of work) adds over the bare
// WALDataStore on save-batch (10 saves of 1,000 posts), save-single (300 durable saves of one
// post) and fetch-predicate (title contains a word, by date, limit 50; 200 fetches over 10,000
// posts): the median of 5 rounds each.
//
//     swift run -c release walstore-context-bench
import Engine
import Foundation
import Models
import Snapshot

let schema = try Schema([
    .init("Post", attributes: [.init("title", .string), .init("content", .string, isOptional: true), .init("date", .date)],
          relationships: [], indexes: [["date"], ["title", "date"]]),
])
let epoch = Date(timeIntervalSinceReferenceDate: 700_000_000)
let words = ["swift", "store", "log", "index", "blob", "frame", "commit", "fetch"]
func post(_ i: Int) -> DefaultSnapshot {
    DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Post"), values: [
        "title": .string("\(words[i % 8]) post \(i) \(words[(i / 8) % 8])"), "content": .string(String(repeating: "x", count: 200)),
        "date": .date(epoch.addingTimeInterval(Double(i))),
    ])
}
func fresh(_ label: String) throws -> StoreContainer {
    let dir = NSTemporaryDirectory() + "ctxbench-\(label)-\(UUID().uuidString)"
    return try StoreContainer(schema: schema, configurations: [.init(name: "Cloud", entityNames: nil, path: dir)])
}
func time(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}
var results: [String: [Double]] = [:]
if CommandLine.arguments.contains("--phases") {
    let c2 = try fresh("ctx"); let context = StoreContext(c2)
    var ins = 0.0, sav = 0.0
    for s in 0..<10 {
        ins += try time { for i in 0..<1000 { try context.insert(post(s * 1000 + i)) } }
        sav += try time { try context.save() }
    }
    let c = try fresh("bare"); let store = c.stores[0]
    var mk = 0.0, bs = 0.0
    for s in 0..<10 {
        var r: [DefaultSnapshot] = []
        mk += time { r = (0..<1000).map { post(s * 1000 + $0) } }
        bs += try time { _ = try store.save(DataStoreSaveChangesRequest(inserted: r)) }
    }
    print("context insert \(ins) save \(sav); bare make \(mk) save \(bs)")
    exit(0)
}
for round in 0..<5 {
    // save-batch: 10 saves of 1,000 posts.
    do {
        let c = try fresh("bare"); let store = c.stores[0]
        results["save-batch bare", default: []].append(try time { for s in 0..<10 { _ = try store.save(DataStoreSaveChangesRequest(inserted: (0..<1000).map { post(s * 1000 + $0) })) } })
        let c2 = try fresh("ctx"); let context = StoreContext(c2)
        results["save-batch context", default: []].append(try time { for s in 0..<10 { for i in 0..<1000 { try context.insert(post(s * 1000 + i)) }; try context.save() } })
    }
    // save-single: 300 saves of one post.
    do {
        let c = try fresh("bare"); let store = c.stores[0]
        results["save-single bare", default: []].append(try time { for i in 0..<300 { _ = try store.save(DataStoreSaveChangesRequest(inserted: [post(i)])) } })
        let c2 = try fresh("ctx"); let context = StoreContext(c2)
        results["save-single context", default: []].append(try time { for i in 0..<300 { try context.insert(post(i)); try context.save() } })
    }
    // fetch-predicate over 10,000 posts: title contains a word, by date, limit 50; 200 times.
    do {
        let c = try fresh("fetch"); let store = c.stores[0]
        for s in 0..<10 { _ = try store.save(DataStoreSaveChangesRequest(inserted: (0..<1000).map { post(s * 1000 + $0) })) }
        let d = Snapshot.FetchDescriptor(entityName: "Post", predicate: .attribute("title").contains("index"), sortBy: [.init("date")], fetchLimit: 50)
        let context = StoreContext(c)
        var n = 0
        results["fetch-predicate bare", default: []].append(try time { for _ in 0..<200 { n += try store.fetch(DataStoreFetchRequest(descriptor: d)).fetchedSnapshots.count } })
        results["fetch-predicate context", default: []].append(try time { for _ in 0..<200 { n += try context.fetch(d).count } })
        precondition(n == 200 * 2 * 50)
    }
    print("round \(round) done")
}
for op in ["save-batch", "save-single", "fetch-predicate"] {
    let bare = results["\(op) bare"]!.sorted()[2], ctx = results["\(op) context"]!.sorted()[2]
    print(String(format: "%@: bare %.4f s, context %.4f s, overhead %+.1f%% (median of 5: %@ / %@)", op, bare, ctx, (ctx / bare - 1) * 100,
                 results["\(op) bare"]!.map { String(format: "%.4f", $0) }.joined(separator: ","), results["\(op) context"]!.map { String(format: "%.4f", $0) }.joined(separator: ",")))
}
