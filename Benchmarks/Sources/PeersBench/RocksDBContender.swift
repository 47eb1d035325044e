import BenchSupport
import CRocksDB
import Foundation
import Synchronization

/// RocksDB through its C API with default options (create_if_missing set), every write with
/// `rocksdb_writeoptions_set_sync(1)`: one `rocksdb_writebatch_t` per commit.
struct RocksDBContender: StoreContender {
    let name = "RocksDB"

    func open(_ path: String) throws -> any BenchStore {
        let store = try RocksDBStore(path: path)
        Self.noteVersion(in: path)
        return store
    }

    /// The library's version as its OPTIONS file records it (`rocksdb_version=7.8.3`), once a
    /// database has been opened; the C API has no version call.
    static var version: String? { foundVersion.withLock { $0 } }

    private static let foundVersion = Mutex<String?>(nil)

    private static func noteVersion(in path: String) {
        guard version == nil,
              let name = try? FileManager.default.contentsOfDirectory(atPath: path).first(where: { $0.hasPrefix("OPTIONS-") }),
              let text = try? String(contentsOfFile: path + "/" + name, encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.contains("rocksdb_version=") })
        else { return }
        let value = String(line.split(separator: "=", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespaces)
        foundVersion.withLock { $0 = value }
    }
}

/// An open RocksDB database.
final class RocksDBStore: BenchStore {
    private var db: OpaquePointer?
    private let options: OpaquePointer
    private let writeOptions: OpaquePointer
    private let readOptions: OpaquePointer

    init(path: String) throws {
        options = rocksdb_options_create()
        rocksdb_options_set_create_if_missing(options, 1)
        writeOptions = rocksdb_writeoptions_create()
        rocksdb_writeoptions_set_sync(writeOptions, 1)
        readOptions = rocksdb_readoptions_create()
        var error: UnsafeMutablePointer<CChar>?
        db = rocksdb_open(options, path, &error)
        do {
            try throwIfError(error, "rocksdb_open(\(path))", free: rocksdb_free)
        } catch {
            destroyOptions()
            throw error
        }
    }

    deinit {
        try? close()
    }

    private func destroyOptions() {
        rocksdb_readoptions_destroy(readOptions)
        rocksdb_writeoptions_destroy(writeOptions)
        rocksdb_options_destroy(options)
    }

    private func write(_ fill: (OpaquePointer) -> Void) throws {
        let batch = rocksdb_writebatch_create()!
        defer { rocksdb_writebatch_destroy(batch) }
        fill(batch)
        var error: UnsafeMutablePointer<CChar>?
        rocksdb_write(db, writeOptions, batch, &error)
        try throwIfError(error, "rocksdb_write", free: rocksdb_free)
    }

    func put(_ records: ArraySlice<Record>) throws {
        try write { batch in
            for record in records {
                record.key.withCChars { key, keyCount in
                    record.value.withCChars { value, valueCount in
                        rocksdb_writebatch_put(batch, key, keyCount, value, valueCount)
                    }
                }
            }
        }
    }

    func delete(_ records: ArraySlice<Record>) throws {
        try write { batch in
            for record in records {
                record.key.withCChars { key, count in rocksdb_writebatch_delete(batch, key, count) }
            }
        }
    }

    func valueLength(_ key: [UInt8]) throws -> Int? {
        var length = 0
        var error: UnsafeMutablePointer<CChar>?
        let found = key.withCChars { pointer, count in rocksdb_get(db, readOptions, pointer, count, &length, &error) }
        try throwIfError(error, "rocksdb_get", free: rocksdb_free)
        guard let found else { return nil }
        defer { rocksdb_free(found) }
        return [UInt8](copying: found, count: length).count
    }

    func scanAll() throws -> (count: Int, bytes: Int) {
        let iterator = rocksdb_create_iterator(db, readOptions)!
        defer { rocksdb_iter_destroy(iterator) }
        var count = 0
        var bytes = 0
        rocksdb_iter_seek_to_first(iterator)
        while rocksdb_iter_valid(iterator) != 0 {
            var keyLength = 0
            var valueLength = 0
            let key = [UInt8](copying: rocksdb_iter_key(iterator, &keyLength), count: keyLength)
            let value = [UInt8](copying: rocksdb_iter_value(iterator, &valueLength), count: valueLength)
            count += 1
            bytes += key.count + value.count
            rocksdb_iter_next(iterator)
        }
        var error: UnsafeMutablePointer<CChar>?
        rocksdb_iter_get_error(iterator, &error)
        try throwIfError(error, "rocksdb iterator", free: rocksdb_free)
        return (count, bytes)
    }

    func close() throws {
        guard let open = db else { return }
        rocksdb_close(open)
        db = nil
        destroyOptions()
    }
}
