import Engine
import EngineTestSupport
import Foundation
import Models
import Snapshot
import SnapshotTestSupport
import Testing

/// A save across two stores is atomic: power loss at every I/O operation of it leaves, after
/// the container is opened again, both stores with the save or both without it.
@Suite struct ContainerPowerLossTests {
    static let epoch = Date(timeIntervalSinceReferenceDate: 700_000_000)

    static func configurations() -> [StoreContainer.Configuration] {
        var options = LogStore.Options()
        options.blobThreshold = 1000
        return ContainerModel.configurations(in: "", options: options)
    }

    static func open(_ fs: FaultInjectingFileSystem) throws -> StoreContainer {
        try StoreContainer(schema: ContainerModel.schema, configurations: configurations(), fileSystem: fs)
    }

    /// What both stores hold, without identifiers: settings, posts with their attachments'
    /// sizes, and how many keys of each kind each engine holds.
    struct Shape: Equatable, CustomStringConvertible {
        var settings: [String]
        var posts: [String]
        var keyKinds: [[UInt8: Int]]
        var description: String { "settings \(settings) posts \(posts) keys \(keyKinds)" }
    }

    static func shape(_ container: StoreContainer) throws -> Shape {
        let settings = try container.fetch(Snapshot.FetchDescriptor(entityName: "Setting")).fetchedSnapshots.map { s in
            "\(s["key"]!)=\(s["value"]!)"
        }
        let attachments = try container.fetch(Snapshot.FetchDescriptor(entityName: "Attachment")).fetchedSnapshots
        let posts = try container.fetch(Snapshot.FetchDescriptor(entityName: "Post")).fetchedSnapshots.map { p in
            let sizes = attachments.filter { $0["post"] == .toOne(p.persistentIdentifier) }.map { a in
                if case .data(let d)? = a["imageData"] { d.count } else { -1 }
            }
            return "\(p["title"]!) \(sizes)"
        }
        let kinds = try container.stores.map { store in
            var kinds: [UInt8: Int] = [:]
            var cursor = try store.engine.scan(prefix: [])
            while let entry = try cursor.next() { kinds[entry.key[0], default: 0] += 1 }
            return kinds
        }
        return Shape(settings: settings.sorted(), posts: posts.sorted(), keyKinds: kinds)
    }

    /// The save under test, touching `Local` and `Cloud`: a setting changed and one inserted,
    /// a post inserted with an attachment large enough to be a blob file.
    static func request(_ container: StoreContainer) throws -> DataStoreSaveChangesRequest<DefaultSnapshot> {
        var theme = try #require(try container.fetch(Snapshot.FetchDescriptor(entityName: "Setting")).fetchedSnapshots.first)
        theme["value"] = "dark"
        let post = BlogModel.post(title: "second", date: epoch.addingTimeInterval(60))
        let attachment = BlogModel.attachment(imageData: Data(repeating: 9, count: 5000), post: post.persistentIdentifier)
        return DataStoreSaveChangesRequest(inserted: [ContainerModel.setting("lang", "ko"), post, attachment], updated: [theme])
    }

    @Test func powerLossAtEveryOperationOfASaveAcrossTwoStoresLeavesBothWithItOrBothWithout() throws {
        let base = FaultInjectingFileSystem()
        do {
            let container = try Self.open(base)
            try container.save(
                DataStoreSaveChangesRequest(inserted: [
                    ContainerModel.setting("theme", "light"), BlogModel.post(title: "first", date: Self.epoch),
                ]))
            try container.close()
        }
        let old = try Self.shape(try Self.open(base.clone()))
        let new: Shape = try {
            let container = try Self.open(base.clone())
            try container.save(try Self.request(container))
            return try Self.shape(container)
        }()
        #expect(old.settings != new.settings && old.posts != new.posts)

        var crashAt = 1
        var completed = false
        var sawOld = false, sawNew = false
        while !completed && crashAt < 500 {
            let fs = base.clone()
            let container = try Self.open(fs)
            let request = try Self.request(container)
            fs.crash(atOperation: crashAt)
            let before = fs.operationCount
            let acknowledged = (try? container.save(request)) != nil
            completed = acknowledged && fs.operationCount - before < crashAt
            fs.powerLoss()
            try? container.close()
            let reopened = try Self.open(fs)
            let shape = try Self.shape(reopened)
            #expect(shape == old || shape == new, "power loss at operation \(crashAt): the stores disagree: \(shape)")
            if acknowledged { #expect(shape == new, "power loss at operation \(crashAt): an acknowledged save is lost") }
            for store in reopened.stores {
                #expect(try (store.engine.scan(prefix: [0x58]).collect()).isEmpty, "power loss at operation \(crashAt): a transaction record is left")
            }
            if shape == old { sawOld = true } else if shape == new { sawNew = true }
            try? reopened.close()
            crashAt += 1
        }
        #expect(completed && sawOld && sawNew, "the sweep reached the end of the save (\(crashAt) operations)")
    }

    /// The two halves of the recovery, each reached by a process crash (which keeps every
    /// write, so the records say exactly where the save stopped): a prepared part without its
    /// decision is rolled back, one whose decision is committed is rolled forward.
    @Test func openingRollsBackAnUndecidedPartAndRollsForwardADecidedOne() throws {
        let base = FaultInjectingFileSystem()
        do {
            let container = try Self.open(base)
            try container.save(DataStoreSaveChangesRequest(inserted: [ContainerModel.setting("theme", "light")]))
            try container.close()
        }
        let old = try Self.shape(try Self.open(base.clone()))
        var seen: Set<Bool> = []
        var crashAt = 1
        while seen.count < 2 && crashAt < 300 {
            let fs = base.clone()
            let container = try Self.open(fs)
            let request = try Self.request(container)
            fs.crash(atOperation: crashAt)
            _ = try? container.save(request)
            fs.processCrash()
            try? container.close()
            crashAt += 1
            let options = Self.configurations()[0].options
            let (prepared, decided): (Bool, Bool) = try {
                let cloud = try LogStore.open(at: "/cloud", options: options, fileSystem: fs)
                let local = try LogStore.open(at: "/local", options: options, fileSystem: fs)
                defer { try? cloud.close(); try? local.close() }
                return (try !(cloud.scan(prefix: [0x58, 0x50]).collect()).isEmpty, try !(local.scan(prefix: [0x58, 0x43]).collect()).isEmpty)
            }()
            guard prepared, !seen.contains(decided) else { continue }
            seen.insert(decided)
            let shape = try Self.shape(try Self.open(fs))
            if decided {
                #expect(shape.settings == [#"string("lang")=string("ko")"#, #"string("theme")=string("dark")"#])
                #expect(shape.posts == [#"string("second") [5000]"#])
            } else {
                #expect(shape == old)
            }
        }
        #expect(seen == [false, true], "crashes left a prepared part both without and with its decision")
    }
}
