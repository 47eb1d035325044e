import BenchSupport
import CLMDB

/// LMDB with its default (durable) environment flags: one write transaction per batch, synced at
/// commit; each point read in its own read-only transaction (reset and renewed, as LMDB
/// recommends); the scan through a cursor in one read transaction.
struct LMDBContender: StoreContender {
    let name = "LMDB"
    /// The map size: the largest the database may grow to (address space, not disk).
    let mapSize: Int

    /// A contender whose map holds `rawBytes` of data many times over.
    init(rawBytes: Int) {
        mapSize = max(1 << 30, rawBytes * 16)
    }

    func open(_ path: String) throws -> any BenchStore {
        try LMDBStore(path: path, mapSize: mapSize)
    }

    /// The library's version, `major.minor.patch`.
    static var version: String {
        var major: Int32 = 0
        var minor: Int32 = 0
        var patch: Int32 = 0
        _ = mdb_version(&major, &minor, &patch)
        return "\(major).\(minor).\(patch)"
    }
}

/// An open LMDB environment with its one unnamed database.
final class LMDBStore: BenchStore {
    private var environment: OpaquePointer?
    private var database: MDB_dbi = 0
    /// The read transaction the point reads reset and renew.
    private var reader: OpaquePointer?

    init(path: String, mapSize: Int) throws {
        try ScratchDirectory.create(path)
        try Self.check(mdb_env_create(&environment), "mdb_env_create")
        do {
            try Self.check(mdb_env_set_mapsize(environment, mapSize), "mdb_env_set_mapsize")
            try Self.check(mdb_env_open(environment, path, 0, 0o644), "mdb_env_open(\(path))")
            var transaction: OpaquePointer?
            try Self.check(mdb_txn_begin(environment, nil, 0, &transaction), "mdb_txn_begin")
            let status = mdb_dbi_open(transaction, nil, 0, &database)
            guard status == MDB_SUCCESS else {
                mdb_txn_abort(transaction)
                throw Self.error(status, "mdb_dbi_open")
            }
            try Self.check(mdb_txn_commit(transaction), "mdb_txn_commit")
        } catch {
            mdb_env_close(environment)
            environment = nil
            throw error
        }
    }

    deinit {
        try? close()
    }

    private static func error(_ status: Int32, _ what: String) -> BenchError {
        BenchError("\(what): \(String(cString: mdb_strerror(status)))")
    }

    private static func check(_ status: Int32, _ what: String) throws {
        guard status == MDB_SUCCESS else { throw error(status, what) }
    }

    /// Runs `body` in a write transaction and commits it (durably, with the default flags).
    private func write(_ body: (OpaquePointer?) throws -> Void) throws {
        var transaction: OpaquePointer?
        try Self.check(mdb_txn_begin(environment, nil, 0, &transaction), "mdb_txn_begin")
        do {
            try body(transaction)
        } catch {
            mdb_txn_abort(transaction)
            throw error
        }
        try Self.check(mdb_txn_commit(transaction), "mdb_txn_commit")
    }

    /// `body` with `bytes` as an `MDB_val` (LMDB does not write through it).
    private func withValue<R>(_ bytes: [UInt8], _ body: (inout MDB_val) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes { raw in
            var value = MDB_val(mv_size: raw.count, mv_data: UnsafeMutableRawPointer(mutating: raw.baseAddress))
            return try body(&value)
        }
    }

    func put(_ records: ArraySlice<Record>) throws {
        try write { transaction in
            for record in records {
                try withValue(record.key) { key in
                    try withValue(record.value) { value in
                        try Self.check(mdb_put(transaction, database, &key, &value, 0), "mdb_put")
                    }
                }
            }
        }
    }

    func delete(_ records: ArraySlice<Record>) throws {
        try write { transaction in
            for record in records {
                try withValue(record.key) { key in
                    let status = mdb_del(transaction, database, &key, nil)
                    guard status == MDB_SUCCESS || status == MDB_NOTFOUND else { throw Self.error(status, "mdb_del") }
                }
            }
        }
    }

    func valueLength(_ key: [UInt8]) throws -> Int? {
        if let reader {
            try Self.check(mdb_txn_renew(reader), "mdb_txn_renew")
        } else {
            try Self.check(mdb_txn_begin(environment, nil, UInt32(MDB_RDONLY), &reader), "mdb_txn_begin(read-only)")
        }
        defer { mdb_txn_reset(reader) }
        var value = MDB_val()
        let status = withValue(key) { key in mdb_get(reader, database, &key, &value) }
        if status == MDB_NOTFOUND { return nil }
        try Self.check(status, "mdb_get")
        return [UInt8](UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)).count
    }

    func scanAll() throws -> (count: Int, bytes: Int) {
        var transaction: OpaquePointer?
        try Self.check(mdb_txn_begin(environment, nil, UInt32(MDB_RDONLY), &transaction), "mdb_txn_begin(read-only)")
        defer { mdb_txn_abort(transaction) }
        var cursor: OpaquePointer?
        try Self.check(mdb_cursor_open(transaction, database, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        var count = 0
        var bytes = 0
        var key = MDB_val()
        var value = MDB_val()
        var status = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
        while status == MDB_SUCCESS {
            let keyBytes = [UInt8](UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size))
            let valueBytes = [UInt8](UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size))
            count += 1
            bytes += keyBytes.count + valueBytes.count
            status = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
        }
        guard status == MDB_NOTFOUND else { throw Self.error(status, "mdb_cursor_get") }
        return (count, bytes)
    }

    func close() throws {
        if let reader {
            mdb_txn_abort(reader)
            self.reader = nil
        }
        guard let open = environment else { return }
        mdb_env_close(open)
        environment = nil
    }
}
