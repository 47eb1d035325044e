import Engine
import EngineTestSupport
import Foundation
import Models
import Snapshot
import SnapshotTestSupport
import Testing

/// A save across stores writes each byte of an attachment once: the prepared part of a
/// participant names the blob its prepare commit wrote, and its commit hands that blob to the
/// attachment's key instead of writing it again.
@Suite struct ContainerSaveBytesTests {
    static let epoch = Date(timeIntervalSinceReferenceDate: 700_000_000)
    static let mebibyte = 1 << 20

    /// 1 MiB that does not compress.
    static func image() -> Data {
        var generator = SeededGenerator(seed: 7)
        return Data(generator.bytes(mebibyte))
    }

    /// `Local` (settings) first, so that `Cloud` (the post and its attachment) is the
    /// participant whose part is prepared.
    static func configurations(_ directory: String, options: LogStore.Options) -> [StoreContainer.Configuration] {
        [
            .init(name: "Local", entityNames: ["Setting"], path: directory + "/local", options: options),
            .init(name: "Cloud", entityNames: ["Post", "Tag", "Attachment", "Item"], path: directory + "/cloud", options: options),
        ]
    }

    static func request() -> DataStoreSaveChangesRequest<DefaultSnapshot> {
        let post = BlogModel.post(title: "hello", date: epoch)
        let attachment = BlogModel.attachment(imageData: image(), post: post.persistentIdentifier)
        return DataStoreSaveChangesRequest(inserted: [ContainerModel.setting("draft", "hello"), post, attachment])
    }

    @Test func aSaveAcrossStoresWritesA1MiBAttachmentOnce() throws {
        let temporary = TemporaryDirectory("walstore-bytes")
        defer { temporary.remove() }
        var options = LogStore.Options()
        options.preallocationSize = 0  // count the bytes the save writes, not zeros ahead of them
        let fs = CountingFileSystem(PosixFileSystem())
        let container = try StoreContainer(
            schema: ContainerModel.schema, configurations: Self.configurations(temporary.path, options: options), fileSystem: fs)
        let before = fs.bytesWritten.load(ordering: .relaxed)
        try container.save(Self.request())
        let written = fs.bytesWritten.load(ordering: .relaxed) - before
        #expect(written >= Self.mebibyte)
        #expect(written < Self.mebibyte + Self.mebibyte / 8, "the save wrote \(written) bytes for a 1 MiB attachment")
        let blobs = try FileManager.default.contentsOfDirectory(atPath: temporary.path + "/cloud/blobs")
        #expect(blobs.count == 1, "\(blobs)")
        let attachment = try #require(try container.fetch(Snapshot.FetchDescriptor(entityName: "Attachment")).fetchedSnapshots.first)
        #expect(attachment["imageData"] == .data(Self.image()))
        try container.close()
        let reopened = try StoreContainer(schema: ContainerModel.schema, configurations: Self.configurations(temporary.path, options: options))
        defer { try? reopened.close() }
        #expect(try reopened.fetch(Snapshot.FetchDescriptor(entityName: "Attachment")).fetchedSnapshots.first?["imageData"] == .data(Self.image()))
    }

    /// Power loss at every I/O operation of such a save: after reopening, both stores have it
    /// or neither does, no transaction record or staged blob is left, and once compacted no blob
    /// file is left that no key references.
    @Test func powerLossAtEveryOperationOfASaveWithAStagedBlobLeavesItWhollyOrNotAtAll() throws {
        var options = LogStore.Options()
        options.blobThreshold = 1000
        let configurations = Self.configurations("", options: options)
        let open = { (fs: FaultInjectingFileSystem) in
            try StoreContainer(schema: ContainerModel.schema, configurations: configurations, fileSystem: fs)
        }
        let image = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7919 >> 3) })
        let base = FaultInjectingFileSystem()
        try open(base).close()
        var crashAt = 1
        var completed = false
        var outcomes: Set<Bool> = []
        while !completed && crashAt < 400 {
            let fs = base.clone()
            let container = try open(fs)
            let post = BlogModel.post(title: "hello", date: Self.epoch)
            let request = DataStoreSaveChangesRequest(inserted: [
                ContainerModel.setting("draft", "hello"), post, BlogModel.attachment(imageData: image, post: post.persistentIdentifier),
            ])
            fs.crash(atOperation: crashAt)
            let before = fs.operationCount
            let acknowledged = (try? container.save(request)) != nil
            completed = acknowledged && fs.operationCount - before < crashAt
            fs.powerLoss()
            try? container.close()
            let reopened = try open(fs)
            let settings = try reopened.fetchCount(Snapshot.FetchDescriptor(entityName: "Setting"))
            let attachments = try reopened.fetch(Snapshot.FetchDescriptor(entityName: "Attachment")).fetchedSnapshots
            let posts = try reopened.fetchCount(Snapshot.FetchDescriptor(entityName: "Post"))
            #expect(
                settings == posts && posts == attachments.count && posts <= 1,
                "power loss at operation \(crashAt): \(settings) settings, \(posts) posts, \(attachments.count) attachments")
            if acknowledged { #expect(posts == 1, "power loss at operation \(crashAt): an acknowledged save is lost") }
            if let attachment = attachments.first { #expect(attachment["imageData"] == .data(image)) }
            for store in reopened.stores {
                #expect(
                    try (store.engine.scan(prefix: [0x58]).collect()).isEmpty,
                    "power loss at operation \(crashAt): a transaction record or staged blob is left")
            }
            // Once compacted, every blob file is one a key references: no copy is left over.
            _ = try reopened.stores[1].engine.compact()
            let blobFiles = fs.names(in: "/cloud/blobs").filter { $0.hasSuffix(".blob") }
            #expect(blobFiles.count == reopened.stores[1].engine.statistics.blobCount, "power loss at operation \(crashAt): \(blobFiles)")
            outcomes.insert(posts == 1)
            try? reopened.close()
            crashAt += 1
        }
        #expect(completed && outcomes == [false, true], "the sweep reached the end of the save (\(crashAt) operations)")
    }
}
