#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Engine
import EngineTestSupport
import Foundation
import Synchronization

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
