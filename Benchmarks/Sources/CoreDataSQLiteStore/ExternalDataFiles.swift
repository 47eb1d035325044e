import Foundation
import Snapshot

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files of external binary data under `.<name>_SUPPORT/_EXTERNAL_DATA/`: one file per
/// value, named by a fresh UUID, written (and with `sync`, synced with its directory) before
/// the transaction that refers to it commits, and removed after the transaction that drops it
/// commits.
struct ExternalDataFiles {
    let directory: String
    let sync: Bool

    /// Makes the directory (and its parent) when missing.
    func prepare() throws {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw DataStoreError(.engine, "The external data directory \(directory) could not be made; check its parent's permissions.", underlying: error)
        }
    }

    /// Writes `data` to a new file and returns its name.
    func write(_ data: Data) throws -> String {
        let name = UUID().uuidString
        let path = directory + "/" + name
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        guard fd >= 0 else { throw failure("create", path) }
        defer { close(fd) }
        var written = 0
        try data.withUnsafeBytes { raw in
            while written < raw.count {
                let n = systemWrite(fd, raw.baseAddress! + written, raw.count - written)
                guard n > 0 else { throw failure("write", path) }
                written += n
            }
        }
        if sync, fsync(fd) != 0 { throw failure("fsync", path) }
        return name
    }

    /// Syncs the directory, so that the files written before are found after a power loss.
    func syncDirectory() throws {
        guard sync else { return }
        let fd = open(directory, O_RDONLY)
        guard fd >= 0 else { throw failure("open", directory) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw failure("fsync", directory) }
    }

    /// The bytes of the file `name`.
    func read(_ name: String) throws -> Data {
        guard !name.contains("/") else { throw ColumnValues.damaged("an external data reference that is not a file name") }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
        } catch {
            throw DataStoreError(.engine, "The external data file \(name) could not be read; the store's support directory is damaged: restore it.", underlying: error)
        }
    }

    /// Removes the files `names` (those already gone are ignored).
    func remove(_ names: some Sequence<String>) {
        for name in names where !name.contains("/") { unlink(directory + "/" + name) }
    }

    private func failure(_ call: String, _ path: String) -> DataStoreError {
        DataStoreError(.engine, "\(call)(\(path)) failed: \(String(cString: strerror(errno))); check the disk and the directory's permissions.")
    }
}

/// `write(2)` (the name is taken by ``ExternalDataFiles/write(_:)`` inside the type).
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, buffer, count)
}
