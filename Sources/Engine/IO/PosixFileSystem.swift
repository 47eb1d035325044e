#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import Synchronization

/// The real file system: POSIX calls, each made through ``Syscall``.
package struct PosixFileSystem: FileSystem {
    package init() {}

    package func createDirectory(_ path: String) throws(EngineError) -> Bool {
        try Syscall.makeDirectory(path)
    }

    package func listDirectory(_ path: String) throws(EngineError) -> [String] {
        try Syscall.listDirectory(path)
    }

    package func openFile(_ path: String, create: Bool) throws(EngineError) -> any StoreFile {
        let fd = try Syscall.openFile(path, flags: O_RDWR | (create ? O_CREAT : 0))
        return PosixFile(fd: fd, path: path)
    }

    package func openFileForReading(_ path: String) throws(EngineError) -> any StoreFile {
        let fd = try Syscall.openFile(path, flags: O_RDONLY)
        return PosixFile(fd: fd, path: path)
    }

    package func removeFile(_ path: String) throws(EngineError) {
        try Syscall.removeFile(path)
    }

    package func rename(_ from: String, to: String) throws(EngineError) {
        try Syscall.renameFile(from, to)
    }

    package func syncDirectory(_ path: String) throws(EngineError) {
        let fd = try Syscall.openFile(path, flags: O_RDONLY | O_DIRECTORY)
        defer { Syscall.closeFile(fd) }
        try Syscall.syncAll(fd, path: path)
    }

    package func lockFile(_ path: String) throws(EngineError) -> any FileLock {
        let fd = try Syscall.openFile(path, flags: O_RDWR | O_CREAT)
        do {
            try Syscall.lockExclusive(fd, path: path)
        } catch {
            Syscall.closeFile(fd)
            if error.code == .locked {
                throw EngineError(
                    .locked, "the store is open elsewhere (in this process or another)", path: path,
                    systemCall: error.systemCall, errno: error.errno)
            }
            throw error
        }
        return PosixLock(fd: fd)
    }
}

/// An open descriptor. Closed when the last reference goes, so a reader that still holds the
/// file can never read through a descriptor number the process has reused.
final class PosixFile: StoreFile {
    let fd: Int32
    let path: String

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit { Syscall.closeFile(fd) }

    func read(at offset: UInt64, count: Int) throws(EngineError) -> [UInt8] {
        try Syscall.readAt(fd, count: count, at: offset, path: path)
    }

    func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws(EngineError) -> Int {
        try Syscall.readAt(fd, into: buffer, at: offset, path: path)
    }

    func write(_ bytes: [UInt8], at offset: UInt64) throws(EngineError) {
        try Syscall.writeAt(fd, bytes, at: offset, path: path)
    }

    func sync() throws(EngineError) {
        try Syscall.syncData(fd, path: path)
    }

    func size() throws(EngineError) -> UInt64 {
        try Syscall.size(fd, path: path)
    }

    func truncate(to size: UInt64) throws(EngineError) {
        try Syscall.truncate(fd, to: size, path: path)
    }

    func linkCount() throws(EngineError) -> UInt64 {
        try Syscall.linkCount(fd, path: path)
    }

    func map() throws(EngineError) -> MappedFile {
        let region = try Syscall.map(fd, count: Int(try size()), path: path)
        return MappedFile(bytes: region) { Syscall.unmap($0) }
    }
}

/// The lock file's descriptor; closing it releases the `flock`.
final class PosixLock: FileLock {
    private let fd: Int32
    private let released = Atomic<Bool>(false)

    init(fd: Int32) { self.fd = fd }

    func unlock() {
        if !released.exchange(true, ordering: .acquiringAndReleasing) { Syscall.closeFile(fd) }
    }

    deinit { unlock() }
}
