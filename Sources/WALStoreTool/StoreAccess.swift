#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Engine
import Foundation
import Snapshot

/// How the commands reach a store.
enum StoreAccess {
    /// The options of every open: never create a store, no background flush or merge.
    static var options: LogStore.Options {
        var options = LogStore.Options()
        options.creation = .never
        options.compaction = .manual
        return options
    }

    /// The options of an open on the copy-on-write view: as ``options``, and no segment hints
    /// written (they would only be built in memory and dropped).
    static var viewOptions: LogStore.Options {
        var options = options
        options.writesSegmentHints = false
        return options
    }

    /// Refuses a path that is missing or not a directory, before anything touches it.
    static func checkDirectory(_ path: String) throws(ToolError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ToolError(.notAStore, "there is nothing at \(path); give the directory of a store", path: path)
        }
        guard isDirectory.boolValue else {
            throw ToolError(
                .notAStore, "\(path) is a file, not a store directory; give the directory that holds the store's MANIFEST and .wal files", path: path)
        }
    }

    /// The store at `path` opened on a copy-on-write view of the disk: recovery and close run as
    /// usual, and the files stay byte-identical. Locked stores are refused (the lock is real).
    static func openReadOnly(_ path: String) throws -> (LogStore, OverlayFileSystem) {
        try checkDirectory(path)
        let fileSystem = OverlayFileSystem()
        let store = try LogStore.open(at: path, options: viewOptions, fileSystem: fileSystem, collectingBlobs: false)
        return (store, fileSystem)
    }

    /// The store at `path` opened for writing (compaction). The open does not start its own
    /// removal of unreferenced blob files: the compaction's collection removes them, and counts
    /// them in its report.
    static func openForWriting(_ path: String) throws -> LogStore {
        try checkDirectory(path)
        return try LogStore.open(at: path, options: options, fileSystem: PosixFileSystem(), collectingBlobs: false)
    }

    /// The key of a `WALDataStore`'s header record (FORMAT.md, "Records (the Snapshot layer)").
    static let headerKey: [UInt8] = [0x00] + Array("store".utf8)

    /// Whether the store's directory holds the `quarantine/` folder a salvage makes.
    static func holdsQuarantine(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path + "/" + LogStore.quarantineDirectoryName, isDirectory: &isDirectory)
            && isDirectory.boolValue
    }

    /// The `WALDataStore` view of `store`, or a failure saying it is a plain engine store.
    static func inspector(_ store: LogStore) throws -> StoreInspector {
        do {
            return try StoreInspector(engine: store)
        } catch let error as StoreInspectionError where error.code == .noHeader {
            throw ToolError(.failed, "the store is a plain engine store, not a WALDataStore: it has no records to read (get and scan read its keys)")
        }
    }

    /// The files of the store's directory and their sizes (the blob directory counted as one
    /// entry), by name.
    static func files(_ path: String) -> [(name: String, bytes: UInt64, count: Int)] {
        let manager = FileManager.default
        let names = ((try? manager.contentsOfDirectory(atPath: path)) ?? []).sorted()
        return names.map { name in
            let full = path + "/" + name
            var isDirectory: ObjCBool = false
            _ = manager.fileExists(atPath: full, isDirectory: &isDirectory)
            if isDirectory.boolValue {
                let inner = (try? manager.contentsOfDirectory(atPath: full)) ?? []
                let bytes = inner.reduce(UInt64(0)) { $0 + size(full + "/" + $1) }
                return (name + "/", bytes, inner.count)
            }
            return (name, size(full), 1)
        }
    }

    static func size(_ path: String) -> UInt64 {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_size) : 0
    }
}

/// Standard output, buffered: one `write` per 64 KiB.
final class StandardOutput {
    private var buffer: [UInt8] = []

    init() { buffer.reserveCapacity(1 << 16) }

    func line(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { flush() }
    }

    func line(bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { flush() }
    }

    func flush() {
        buffer.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(1, raw.baseAddress! + offset, raw.count - offset)
                if n <= 0 { break }
                offset += n
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
