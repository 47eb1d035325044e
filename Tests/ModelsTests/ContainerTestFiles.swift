#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Engine
import EngineTestSupport
import Foundation
import Synchronization

/// Every file under `path` (by its path below it) and its bytes.
func filesUnder(_ path: String) throws -> [String: Data] {
    var result: [String: Data] = [:]
    let enumerator = FileManager.default.enumerator(atPath: path)
    while let name = enumerator?.nextObject() as? String {
        var isDirectory: ObjCBool = false
        let full = path + "/" + name
        if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue {
            result[name] = try Data(contentsOf: URL(fileURLWithPath: full))
        }
    }
    return result
}

/// A directory this process may not make a store in, found by a real condition: a directory of
/// mode 000 for an ordinary user; as root, whom permission bits do not refuse, a directory of
/// sysfs, where the kernel refuses every `mkdir` (`EPERM`). `nil` where neither exists (root
/// on a system without sysfs).
enum DeniedDirectory {
    /// A path whose directory cannot be made (its parent exists), or `nil`.
    static func storePath(in temporary: TemporaryDirectory) -> String? {
        if getuid() != 0 {
            let parent = temporary.path + "/no-access"
            guard mkdir(parent, 0o000) == 0 else { return nil }
            return parent + "/store"
        }
        return isSysfsAvailable ? "/sys/walstore-\(UUID().uuidString)" : nil
    }

    /// Whether the test can find such a directory here.
    static var isAvailable: Bool { getuid() != 0 || isSysfsAvailable }

    private static var isSysfsAvailable: Bool {
        var status = stat()
        return stat("/sys/kernel", &status) == 0
    }
}

/// A file system that counts the bytes written through it, over another one.
final class CountingFileSystem: FileSystem {
    let base: any FileSystem
    /// Bytes passed to `write` so far, on every file.
    let bytesWritten = Atomic<Int>(0)

    init(_ base: any FileSystem) { self.base = base }

    func createDirectory(_ path: String) throws(EngineError) -> Bool { try base.createDirectory(path) }
    func listDirectory(_ path: String) throws(EngineError) -> [String] { try base.listDirectory(path) }
    func openFile(_ path: String, create: Bool) throws(EngineError) -> any StoreFile {
        CountingFile(try base.openFile(path, create: create), counter: self)
    }
    func openFileForReading(_ path: String) throws(EngineError) -> any StoreFile { try base.openFileForReading(path) }
    func removeFile(_ path: String) throws(EngineError) { try base.removeFile(path) }
    func rename(_ from: String, to: String) throws(EngineError) { try base.rename(from, to: to) }
    func syncDirectory(_ path: String) throws(EngineError) { try base.syncDirectory(path) }
    func lockFile(_ path: String) throws(EngineError) -> any FileLock { try base.lockFile(path) }
}

final class CountingFile: StoreFile {
    let base: any StoreFile
    let counter: CountingFileSystem

    init(_ base: any StoreFile, counter: CountingFileSystem) {
        self.base = base
        self.counter = counter
    }

    var path: String { base.path }
    func read(at offset: UInt64, count: Int) throws(EngineError) -> [UInt8] { try base.read(at: offset, count: count) }
    func write(_ bytes: [UInt8], at offset: UInt64) throws(EngineError) {
        counter.bytesWritten.add(bytes.count, ordering: .relaxed)
        try base.write(bytes, at: offset)
    }
    func sync() throws(EngineError) { try base.sync() }
    func size() throws(EngineError) -> UInt64 { try base.size() }
    func truncate(to size: UInt64) throws(EngineError) { try base.truncate(to: size) }
    func linkCount() throws(EngineError) -> UInt64 { try base.linkCount() }
    func map() throws(EngineError) -> MappedFile { try base.map() }
}
