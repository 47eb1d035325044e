// walstore-context-bench: what StoreContext (the Models module's unit of work) adds over the bare
// WALDataStore on save-batch (10 saves of 1,000 posts), save-single (300 durable saves of one
// post) and fetch-predicate (title contains a word, by date, limit 50; 200 fetches over 10,000
// posts): the median of 5 rounds each. save-single observed: save-single on the bare store with
// 0 observed fetches, 10 on the saved entity (each re-run by every save: an indexed title
// lookup) and 1,000 on another entity (none re-run), beside the bare figure.
//
//     swift run -c release walstore-context-bench
//     swift run -c release walstore-context-bench --quick   (1 round of 30 saves and batches of 100: checks the rows run)
import Engine
import Foundation
import Models
import Snapshot

let schema = try Schema([
    .init("Post", attributes: [.init("title", .string), .init("content", .string, isOptional: true), .init("date", .date)],
          relationships: [], indexes: [["date"], ["title", "date"]]),
    .init("Note", attributes: [.init("text", .string)]),
])
let quick = CommandLine.arguments.contains("--quick")
let rounds = quick ? 1 : 5, singles = quick ? 30 : 300, batch = quick ? 100 : 1000
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
for round in 0..<rounds {
    // save-batch: 10 saves of 1,000 posts.
    do {
        let c = try fresh("bare"); let store = c.stores[0]
        results["save-batch bare", default: []].append(try time { for s in 0..<10 { _ = try store.save(DataStoreSaveChangesRequest(inserted: (0..<batch).map { post(s * batch + $0) })) } })
        let c2 = try fresh("ctx"); let context = StoreContext(c2)
        results["save-batch context", default: []].append(try time { for s in 0..<10 { for i in 0..<batch { try context.insert(post(s * batch + i)) }; try context.save() } })
    }
    // save-single: 300 saves of one post.
    do {
        let c = try fresh("bare"); let store = c.stores[0]
        results["save-single bare", default: []].append(try time { for i in 0..<singles { _ = try store.save(DataStoreSaveChangesRequest(inserted: [post(i)])) } })
        let c2 = try fresh("ctx"); let context = StoreContext(c2)
        results["save-single context", default: []].append(try time { for i in 0..<singles { try context.insert(post(i)); try context.save() } })
    }
    // save-single observed: the same saves with 0, 10 (on Post) and 1,000 (on Note) observed fetches.
    for (label, count, entity) in [("0", 0, "Post"), ("10 on the saved entity", 10, "Post"), ("1,000 on another entity", 1000, "Note")] {
        let c = try fresh("observed"); let store = c.stores[0]
        let observations = try (0..<count).map { k in
            try store.observe(Snapshot.FetchDescriptor(
                entityName: entity, predicate: entity == "Post" ? .attribute("title") == "\(words[k % 8]) post \(k) \(words[(k / 8) % 8])" : .attribute("text") == "\(k)"))
        }
        results["save-single observed \(label)", default: []].append(try time { for i in 0..<singles { _ = try store.save(DataStoreSaveChangesRequest(inserted: [post(i)])) } })
        for observation in observations { observation.cancel() }
    }
    // fetch-predicate over 10,000 posts: title contains a word, by date, limit 50; 200 times.
    do {
        let c = try fresh("fetch"); let store = c.stores[0]
        for s in 0..<10 { _ = try store.save(DataStoreSaveChangesRequest(inserted: (0..<batch).map { post(s * batch + $0) })) }
        let d = Snapshot.FetchDescriptor(entityName: "Post", predicate: .attribute("title").contains("index"), sortBy: [.init("date")], fetchLimit: 50)
        let context = StoreContext(c)
        var n = 0
        results["fetch-predicate bare", default: []].append(try time { for _ in 0..<200 { n += try store.fetch(DataStoreFetchRequest(descriptor: d)).fetchedSnapshots.count } })
        results["fetch-predicate context", default: []].append(try time { for _ in 0..<200 { n += try context.fetch(d).count } })
        precondition(n == 200 * 2 * 50)
    }
    print("round \(round) done")
}
@MainActor func median(_ key: String) -> Double { let r = results[key]!.sorted(); return r[r.count / 2] }
for op in ["save-batch", "save-single", "fetch-predicate"] {
    let bare = median("\(op) bare"), ctx = median("\(op) context")
    print(String(format: "%@: bare %.4f s, context %.4f s, overhead %+.1f%% (median of %d: %@ / %@)", op, bare, ctx, (ctx / bare - 1) * 100, rounds,
                 results["\(op) bare"]!.map { String(format: "%.4f", $0) }.joined(separator: ","), results["\(op) context"]!.map { String(format: "%.4f", $0) }.joined(separator: ",")))
}
let bareSingle = median("save-single bare")
print(String(format: "save-single observed: bare %.4f s", bareSingle) + ["0", "10 on the saved entity", "1,000 on another entity"].map { label in
    let t = median("save-single observed \(label)")
    return String(format: ", %@ %.4f s (%+.1f%%)", label, t, (t / bareSingle - 1) * 100)
}.joined() + " (median of \(rounds))")
