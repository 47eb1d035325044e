#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Engine
import Foundation
import Synchronization

/// The real file system seen through a copy-on-write layer in memory: reads come from disk,
/// and every write, truncation, creation, rename and removal lands in memory only. The tool's
/// read-only commands open a store on it, so that recovery, salvage and close (which write hint
/// files, close frames, repairs) run as usual while the store's files stay byte-identical.
///
/// The directory lock is the real one (`flock` on the store's existing `LOCK` file), so a store
/// another process holds is refused as ``EngineError/Code/locked``, as on the real file system.
final class OverlayFileSystem: FileSystem {
    private let base = PosixFileSystem()
    /// The directory lock is held by another store this process opened (on another overlay) for
    /// as long as this overlay is used: its stores take no lock of their own.
    private let lockHeldElsewhere: Bool

    /// A view of the real file system. With `lockHeldElsewhere`, a store opened on it takes no
    /// directory lock: for a second view of a store this process holds open on another overlay
    /// (an `flock` of the same file would refuse it), used only while that store stays open.
    init(lockHeldElsewhere: Bool = false) {
        self.lockHeldElsewhere = lockHeldElsewhere
    }
    private struct State {
        /// Every file opened or made, by path: the same object for every open, so that what one
        /// writes the next reads.
        var files: [String: OverlayFile] = [:]
        /// Paths removed or renamed away.
        var removed: Set<String> = []
        /// Directories made in memory.
        var directories: Set<String> = []
    }
    private let state = Mutex(State())

    func createDirectory(_ path: String) throws(EngineError) -> Bool {
        if state.withLock({ $0.directories.contains(path) }) { return false }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw EngineError(.io, "a file is in the way of a directory", path: path, systemCall: "mkdir", errno: EEXIST)
            }
            return false
        }
        state.withLock { _ = $0.directories.insert(path) }
        return true
    }

    func listDirectory(_ path: String) throws(EngineError) -> [String] {
        var names: Set<String> = []
        let inMemory = state.withLock { $0.directories.contains(path) }
        if !inMemory { names = Set(try base.listDirectory(path)) }
        let prefix = path.hasSuffix("/") ? path : path + "/"
        return state.withLock { s in
            names = names.filter { !s.removed.contains(prefix + $0) }
            for key in s.files.keys where key.hasPrefix(prefix) {
                let rest = key.dropFirst(prefix.count)
                if !rest.contains("/") { names.insert(String(rest)) }
            }
            for directory in s.directories where directory.hasPrefix(prefix) {
                let rest = directory.dropFirst(prefix.count)
                if !rest.contains("/") { names.insert(String(rest)) }
            }
            return Array(names)
        }
    }

    func openFile(_ path: String, create: Bool) throws(EngineError) -> any StoreFile {
        if let file = state.withLock({ $0.files[path] }) { return file }
        let gone = state.withLock { $0.removed.contains(path) }
        var file: OverlayFile
        if !gone, let real = try? base.openFileForReading(path) {
            file = OverlayFile(path: path, base: real)
        } else if create {
            file = OverlayFile(path: path, base: nil)
        } else {
            throw EngineError(.io, "no such file", path: path, systemCall: "open", errno: ENOENT)
        }
        return state.withLock { s in
            if let existing = s.files[path] { return existing }
            s.files[path] = file
            s.removed.remove(path)
            return file
        }
    }

    func openFileForReading(_ path: String) throws(EngineError) -> any StoreFile {
        try openFile(path, create: false)
    }

    func removeFile(_ path: String) throws(EngineError) {
        let exists = state.withLock { $0.files[path] != nil }
        if !exists { _ = try openFile(path, create: false) }
        state.withLock { s in
            s.files[path] = nil
            s.removed.insert(path)
        }
    }

    func rename(_ from: String, to: String) throws(EngineError) {
        guard let file = try openFile(from, create: false) as? OverlayFile else { return }
        state.withLock { s in
            s.files[to] = file
            s.files[from] = nil
            s.removed.insert(from)
            s.removed.remove(to)
        }
    }

    func syncDirectory(_ path: String) throws(EngineError) {}

    func lockFile(_ path: String) throws(EngineError) -> any FileLock {
        if lockHeldElsewhere { return NoLock() }
        if FileManager.default.fileExists(atPath: path), !state.withLock({ $0.removed.contains(path) }) {
            return try base.lockFile(path)
        }
        // No lock file on disk: no opener holds this store (an opener makes the file first).
        return NoLock()
    }
}

private struct NoLock: FileLock {
    func unlock() {}
}

/// A file of the overlay: the real file until its first change, then its bytes in memory.
///
/// `@unchecked Sendable`: `content` is read and written only under its mutex.
private final class OverlayFile: StoreFile, @unchecked Sendable {
    let path: String
    private enum Content {
        case base(any StoreFile)
        case memory([UInt8])
    }
    private let content: Mutex<Content>

    init(path: String, base: (any StoreFile)?) {
        self.path = path
        self.content = Mutex(base.map(Content.base) ?? .memory([]))
    }

    /// The bytes in memory, copied from the real file on the first change.
    private func withBytes<R>(_ body: (inout [UInt8]) throws(EngineError) -> R) throws(EngineError) -> R {
        try content.withLock { (c: inout Content) throws(EngineError) -> R in
            var bytes: [UInt8]
            switch c {
            case .memory(let b): bytes = b
            case .base(let file):
                let size = try file.size()
                bytes = try file.read(at: 0, count: Int(size))
            }
            c = .memory([])
            defer { c = .memory(bytes) }
            return try body(&bytes)
        }
    }

    func read(at offset: UInt64, count: Int) throws(EngineError) -> [UInt8] {
        let base: (any StoreFile)? = content.withLock { c in
            if case .base(let file) = c { return file }
            return nil
        }
        if let base { return try base.read(at: offset, count: count) }
        return content.withLock { c in
            guard case .memory(let bytes) = c, offset < UInt64(bytes.count) else { return [] }
            let start = Int(offset)
            return Array(bytes[start..<min(bytes.count, start + count)])
        }
    }

    func write(_ bytes: [UInt8], at offset: UInt64) throws(EngineError) {
        try withBytes { (b: inout [UInt8]) throws(EngineError) in
            let start = Int(offset)
            if b.count < start + bytes.count { b.append(contentsOf: repeatElement(0, count: start + bytes.count - b.count)) }
            b.replaceSubrange(start..<start + bytes.count, with: bytes)
        }
    }

    func sync() throws(EngineError) {}

    func size() throws(EngineError) -> UInt64 {
        let base: (any StoreFile)? = content.withLock { c in
            if case .base(let file) = c { return file }
            return nil
        }
        if let base { return try base.size() }
        return content.withLock { c in
            if case .memory(let bytes) = c { return UInt64(bytes.count) }
            return 0
        }
    }

    func truncate(to size: UInt64) throws(EngineError) {
        try withBytes { (b: inout [UInt8]) throws(EngineError) in
            let n = Int(size)
            if b.count > n { b.removeLast(b.count - n) } else { b.append(contentsOf: repeatElement(0, count: n - b.count)) }
        }
    }

    func linkCount() throws(EngineError) -> UInt64 { 1 }

    func map() throws(EngineError) -> MappedFile {
        let base: (any StoreFile)? = content.withLock { c in
            if case .base(let file) = c { return file }
            return nil
        }
        if let base { return try base.map() }
        let copy: UnsafeMutableRawBufferPointer = content.withLock { c in
            guard case .memory(let bytes) = c else { return .allocate(byteCount: 0, alignment: 8) }
            let region = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 8)
            region.copyBytes(from: bytes)
            return UnsafeMutableRawBufferPointer(rebasing: region[0..<bytes.count])
        }
        return MappedFile(bytes: UnsafeRawBufferPointer(copy)) { region in
            UnsafeMutableRawBufferPointer(mutating: region).deallocate()
        }
    }
}
