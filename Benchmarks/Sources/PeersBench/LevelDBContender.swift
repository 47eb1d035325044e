import BenchSupport
import CLevelDB

/// LevelDB through its C API with default options (create_if_missing set), every write with
/// `leveldb_writeoptions_set_sync(1)`: one `leveldb_writebatch_t` per commit.
struct LevelDBContender: StoreContender {
    let name = "LevelDB"

    func open(_ path: String) throws -> any BenchStore {
        try LevelDBStore(path: path)
    }

    /// The library's version, `major.minor`.
    static var version: String { "\(leveldb_major_version()).\(leveldb_minor_version())" }
}

/// An open LevelDB database.
final class LevelDBStore: BenchStore {
    private var db: OpaquePointer?
    private let options: OpaquePointer
    private let writeOptions: OpaquePointer
    private let readOptions: OpaquePointer

    init(path: String) throws {
        options = leveldb_options_create()
        leveldb_options_set_create_if_missing(options, 1)
        writeOptions = leveldb_writeoptions_create()
        leveldb_writeoptions_set_sync(writeOptions, 1)
        readOptions = leveldb_readoptions_create()
        var error: UnsafeMutablePointer<CChar>?
        db = leveldb_open(options, path, &error)
        do {
            try throwIfError(error, "leveldb_open(\(path))", free: leveldb_free)
        } catch {
            destroyOptions()
            throw error
        }
    }

    deinit {
        try? close()
    }

    private func destroyOptions() {
        leveldb_readoptions_destroy(readOptions)
        leveldb_writeoptions_destroy(writeOptions)
        leveldb_options_destroy(options)
    }

    private func write(_ fill: (OpaquePointer) -> Void) throws {
        let batch = leveldb_writebatch_create()!
        defer { leveldb_writebatch_destroy(batch) }
        fill(batch)
        var error: UnsafeMutablePointer<CChar>?
        leveldb_write(db, writeOptions, batch, &error)
        try throwIfError(error, "leveldb_write", free: leveldb_free)
    }

    func put(_ records: ArraySlice<Record>) throws {
        try write { batch in
            for record in records {
                record.key.withCChars { key, keyCount in
                    record.value.withCChars { value, valueCount in
                        leveldb_writebatch_put(batch, key, keyCount, value, valueCount)
                    }
                }
            }
        }
    }

    func delete(_ records: ArraySlice<Record>) throws {
        try write { batch in
            for record in records {
                record.key.withCChars { key, count in leveldb_writebatch_delete(batch, key, count) }
            }
        }
    }

    func valueLength(_ key: [UInt8]) throws -> Int? {
        var length = 0
        var error: UnsafeMutablePointer<CChar>?
        let found = key.withCChars { pointer, count in leveldb_get(db, readOptions, pointer, count, &length, &error) }
        try throwIfError(error, "leveldb_get", free: leveldb_free)
        guard let found else { return nil }
        defer { leveldb_free(found) }
        return [UInt8](copying: found, count: length).count
    }

    func scanAll() throws -> (count: Int, bytes: Int) {
        let iterator = leveldb_create_iterator(db, readOptions)!
        defer { leveldb_iter_destroy(iterator) }
        var count = 0
        var bytes = 0
        leveldb_iter_seek_to_first(iterator)
        while leveldb_iter_valid(iterator) != 0 {
            var keyLength = 0
            var valueLength = 0
            let key = [UInt8](copying: leveldb_iter_key(iterator, &keyLength), count: keyLength)
            let value = [UInt8](copying: leveldb_iter_value(iterator, &valueLength), count: valueLength)
            count += 1
            bytes += key.count + value.count
            leveldb_iter_next(iterator)
        }
        var error: UnsafeMutablePointer<CChar>?
        leveldb_iter_get_error(iterator, &error)
        try throwIfError(error, "leveldb iterator", free: leveldb_free)
        return (count, bytes)
    }

    func close() throws {
        guard let open = db else { return }
        leveldb_close(open)
        db = nil
        destroyOptions()
    }
}
