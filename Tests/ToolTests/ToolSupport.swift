import Engine
import EngineTestSupport
import Foundation
import Snapshot
import Testing

/// Runs the built `walstore` (a sibling of the test bundle) as a user would.
struct Tool {
    struct Run {
        var status: Int32
        var output: String
        var error: String

        /// The standard output parsed as one JSON object.
        func json() throws -> [String: Any] {
            let object = try JSONSerialization.jsonObject(with: Data(output.utf8))
            return try #require(object as? [String: Any], "standard output is not one JSON object: \(output)")
        }

        /// Each line of standard output parsed as a JSON object (JSON Lines).
        func jsonLines() throws -> [[String: Any]] {
            try output.split(separator: "\n").map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            }
        }
    }

    static let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("walstore")

    static func run(_ arguments: String...) throws -> Run { try run(arguments) }

    static func run(_ arguments: [String]) throws -> Run {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes to the end before waiting, so that a large output cannot block the child.
        let errorReader = Thread.detachNewThreadReading(err)
        let output = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, output: String(decoding: output, as: UTF8.self), error: errorReader.wait())
    }
}

extension Thread {
    /// Reads `pipe` to its end on another thread.
    final class PipeReader: @unchecked Sendable {
        // `@unchecked Sendable`: `data` is written by the reading thread before `done` is
        // signalled and read only after `wait()` has waited for that signal.
        private var data = Data()
        private let done = DispatchSemaphore(value: 0)
        init(_ pipe: Pipe) {
            let handle = pipe.fileHandleForReading
            Thread.detachNewThread { [self] in
                data = handle.readDataToEndOfFile()
                done.signal()
            }
        }
        func wait() -> String {
            done.wait()
            return String(decoding: data, as: UTF8.self)
        }
    }
    static func detachNewThreadReading(_ pipe: Pipe) -> PipeReader { PipeReader(pipe) }
}

/// Every file under `path` and its bytes, for byte-identical checks.
func directoryContents(_ path: String) -> [String: Data] {
    var result: [String: Data] = [:]
    guard let walker = FileManager.default.enumerator(atPath: path) else { return result }
    while let name = walker.nextObject() as? String {
        var isDirectory: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: path + "/" + name, isDirectory: &isDirectory)
        if !isDirectory.boolValue { result[name] = FileManager.default.contents(atPath: path + "/" + name) ?? Data() }
    }
    return result
}

/// The tool tests' model: inheritance (Media → Photo, Video), every attribute type (Sample),
/// one-to-many with cascade and external assets (Post → Attachment), many-to-many (Post ↔ Tag),
/// a to-one without inverse (Post.author → Person) and a to-many without inverse
/// (Sample.favourites → Tag), an index and a unique attribute.
enum ToolModel {
    static let schema: Schema = {
        do {
            return try Schema([
                .init(
                    "Post", attributes: [.init("title", .string), .init("content", .string, isOptional: true), .init("date", .date)],
                    relationships: [
                        .init("attachments", destination: "Attachment", .toMany, inverse: "post", deleteRule: .cascade),
                        .init("tags", destination: "Tag", .toMany, inverse: "posts"),
                        .init("author", destination: "Person"),
                    ],
                    indexes: [["date"]]),
                .init(
                    "Attachment", attributes: [.init("imageData", .data, options: .externalStorage)],
                    relationships: [.init("post", destination: "Post", inverse: "attachments")]),
                .init(
                    "Tag", attributes: [.init("name", .string, options: .unique)],
                    relationships: [.init("posts", destination: "Post", .toMany, inverse: "tags")]),
                .init("Person", attributes: [.init("name", .string)]),
                .init("Media", isAbstract: true, attributes: [.init("caption", .string)]),
                .init("Photo", superentity: "Media", attributes: [.init("width", .int32)]),
                .init("Video", superentity: "Media", attributes: [.init("seconds", .double)]),
                .init(
                    "Sample",
                    attributes: [
                        .init("bool", .bool), .init("int", .int), .init("int8", .int8), .init("int16", .int16), .init("int32", .int32),
                        .init("int64", .int64), .init("uint", .uint), .init("uint8", .uint8), .init("uint16", .uint16),
                        .init("uint32", .uint32), .init("uint64", .uint64), .init("float", .float), .init("double", .double),
                        .init("string", .string), .init("date", .date), .init("uuid", .uuid), .init("url", .url), .init("data", .data),
                        .init("decimal", .decimal), .init("strings", .array(.string)), .init("ints", .array(.int64)),
                        .init("dates", .array(.date)), .init("nested", .array(.array(.int))), .init("codable", .codable(typeName: "Point")),
                        .init("missing", .string, isOptional: true),
                    ], relationships: [.init("favourites", destination: "Tag", .toMany)]),
            ])
        } catch {
            preconditionFailure("the tool model is a fixed, consistent schema: \(error)")
        }
    }()

    static let epoch = Date(timeIntervalSince1970: 1_700_000_000.25)

    /// Makes a store at `path` with `posts` posts (each with an attachment, the first two tags,
    /// an author), two photos, a video and two samples of every attribute type.
    @discardableResult
    static func makeStore(at path: String, posts: Int = 3) throws -> WALDataStore {
        let store = try WALDataStore(WALStoreConfiguration(name: "Tool", schema: schema, path: path))
        func new(_ entity: String, _ values: [String: PropertyValue]) -> DefaultSnapshot {
            DefaultSnapshot(persistentIdentifier: .temporary(entityName: entity), values: values)
        }
        let swift = new("Tag", ["name": "swift"]), linux = new("Tag", ["name": "linux"])
        let author = new("Person", ["name": "Ada"])
        var inserted = [swift, linux, author]
        for i in 0..<posts {
            let post = new(
                "Post",
                [
                    "title": .string("Post \(i)"), "content": i == 1 ? .null : .string("body \(i)"),
                    "date": .date(epoch.addingTimeInterval(Double(i) * 60)),
                    "tags": .toMany(i % 2 == 0 ? [swift.persistentIdentifier, linux.persistentIdentifier] : [swift.persistentIdentifier]),
                    "author": .toOne(i == 2 ? nil : author.persistentIdentifier),
                ])
            let attachment = new(
                "Attachment",
                [
                    "imageData": .data(Data((0..<(i == 0 ? 70_000 : 40)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) })),
                    "post": .toOne(post.persistentIdentifier),
                ])
            inserted += [post, attachment]
        }
        inserted += [
            new("Photo", ["caption": "sunrise", "width": .int32(4032)]), new("Photo", ["caption": "dusk", "width": .int32(-1)]),
            new("Video", ["caption": "waves", "seconds": .double(12.5)]),
        ]
        for i in 0..<2 {
            inserted.append(
                new(
                    "Sample",
                    [
                        "bool": .bool(i == 0), "int": .int(-42 - i), "int8": .int8(-8), "int16": .int16(1600), "int32": .int32(Int32.min),
                        "int64": .int64(Int64.max), "uint": .uint(UInt.max), "uint8": .uint8(255), "uint16": .uint16(65_535),
                        "uint32": .uint32(UInt32.max), "uint64": .uint64(UInt64.max - UInt64(i)), "float": .float(0.1),
                        "double": .double(i == 0 ? -0.000001 : 1e300),
                        "string": .string("tab\tquote\"é✓"), "date": .date(epoch),
                        "uuid": .uuid(UUID(uuidString: "6F9619FF-8B86-D011-B42D-00CF4FC964FF")!),
                        "url": .url(URL(string: "https://example.com/a?b=c")!), "data": .data(Data([0, 1, 2, 255])),
                        "decimal": .decimal(Decimal(string: "12345.6789")!), "strings": .array(["a", "b"]), "ints": .array([.int64(1), .int64(-2)]),
                        "dates": .array([.date(epoch)]), "nested": .array([.array([.int(1)]), .array([])]),
                        "codable": .codable(typeName: "Point", encoded: Data("{\"x\":1}".utf8)), "missing": .null,
                        "favourites": .toMany(i == 0 ? [linux.persistentIdentifier] : []),
                    ]))
        }
        _ = try store.save(DataStoreSaveChangesRequest(inserted: inserted))
        return store
    }

    /// Every object of `store` keyed by record name, each property's value with identifiers
    /// written as record names (to-many sorted): what two stores must agree on to hold the same
    /// objects, links and assets.
    static func contents(of store: WALDataStore) throws -> [String: [String: PropertyValue]] {
        var result: [String: [String: PropertyValue]] = [:]
        func name(_ id: PersistentIdentifier) -> String { "\(id.entityName)_\(id.primaryKey)" }
        for entity in schema.entities where entity.superentityName == nil {
            for snapshot in try store.fetch(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: entity.name))).fetchedSnapshots {
                var values: [String: PropertyValue] = [:]
                for (key, value) in snapshot.values {
                    switch value {
                    case .toOne(let id): values[key] = id.map { .string(name($0)) } ?? .null
                    case .toMany(let ids): values[key] = .array(ids.map(name).sorted().map { PropertyValue.string($0) })
                    default: values[key] = value
                    }
                }
                result[name(snapshot.persistentIdentifier)] = values
            }
        }
        return result
    }
}
