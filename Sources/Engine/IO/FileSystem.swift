/// The file-system operations the engine needs, and nothing more.
///
/// Two implementations exist: ``PosixFileSystem`` (every system call in `Syscalls.swift`) and, for
/// tests, `FaultInjectingFileSystem` in the `EngineTestSupport` target, which can drop unsynced
/// bytes, cut a write short and fail any chosen operation.
///
/// Durability model (the one the fault-injecting implementation enforces): bytes written to a
/// file are durable only after ``StoreFile/sync()`` on it; a created, renamed or removed directory
/// entry is durable only after ``FileSystem/syncDirectory(_:)`` on its directory.
package protocol FileSystem: Sendable {
    /// Creates the directory if it does not exist (one level); true when it was created.
    func createDirectory(_ path: String) throws(EngineError) -> Bool
    /// The names (not paths) of the entries in a directory, `.` and `..` excluded, in no order.
    func listDirectory(_ path: String) throws(EngineError) -> [String]
    /// Opens a file for reading and writing; `create` makes it if missing.
    func openFile(_ path: String, create: Bool) throws(EngineError) -> any StoreFile
    /// Opens an existing file for reading only (a caller's file to copy into a blob).
    func openFileForReading(_ path: String) throws(EngineError) -> any StoreFile
    /// Removes a file.
    func removeFile(_ path: String) throws(EngineError)
    /// Renames a file, replacing any file at `to`.
    func rename(_ from: String, to: String) throws(EngineError)
    /// Makes the directory's entries (creations, renames, removals) durable.
    func syncDirectory(_ path: String) throws(EngineError)
    /// Takes an exclusive lock on the file at `path` (created if missing) without waiting; throws
    /// ``EngineError/Code/locked`` when another opener, in this process or another, holds it.
    func lockFile(_ path: String) throws(EngineError) -> any FileLock
}

/// An open file. Reads may run on any thread at once; the engine serialises writes to one file.
package protocol StoreFile: AnyObject, Sendable {
    var path: String { get }
    /// Reads up to `count` bytes at `offset`; fewer only at end of file.
    func read(at offset: UInt64, count: Int) throws(EngineError) -> [UInt8]
    /// Reads into `buffer` from `offset` until it is full or the file ends; returns the bytes
    /// read (fewer than `buffer.count` only at end of file).
    func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws(EngineError) -> Int
    /// Writes all of `bytes` at `offset`, or throws. After a throw, any prefix may have landed.
    func write(_ bytes: [UInt8], at offset: UInt64) throws(EngineError)
    /// Makes every byte written so far durable (`fdatasync`; `F_FULLFSYNC` on Darwin).
    func sync() throws(EngineError)
    /// The file's current size in bytes.
    func size() throws(EngineError) -> UInt64
    /// Cuts the file to `size` bytes.
    func truncate(to size: UInt64) throws(EngineError)
    /// How many directory entries name the file: more than one when it has been hard-linked
    /// elsewhere (a backup made with `cp -al`, say).
    func linkCount() throws(EngineError) -> UInt64
    /// Maps the whole file read-only. The mapping stays valid after the file is removed.
    func map() throws(EngineError) -> MappedFile
}

extension StoreFile {
    /// ``read(at:into:)`` by way of ``read(at:count:)`` (one copy more): for file systems that
    /// hand out arrays anyway.
    package func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws(EngineError) -> Int {
        let bytes = try read(at: offset, count: buffer.count)
        bytes.withUnsafeBytes { buffer.copyMemory(from: $0) }
        return bytes.count
    }
}

/// A read-only view of a whole file's bytes, released when the last reference goes.
///
/// `@unchecked Sendable`: the bytes are never written through this object, and `release` runs
/// once, from `deinit`, when no other reference remains; so any thread may read `bytes` meanwhile.
package final class MappedFile: @unchecked Sendable {
    package let bytes: UnsafeRawBufferPointer
    private let release: @Sendable (UnsafeRawBufferPointer) -> Void

    package init(bytes: UnsafeRawBufferPointer, release: @escaping @Sendable (UnsafeRawBufferPointer) -> Void) {
        self.bytes = bytes
        self.release = release
    }

    deinit { release(bytes) }
}

/// A held exclusive lock; released by ``unlock()`` (or when the process ends).
package protocol FileLock: Sendable {
    func unlock()
}
