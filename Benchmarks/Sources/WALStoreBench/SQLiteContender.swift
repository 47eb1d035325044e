import BenchSupport
import SQLiteSupport

/// SQLite 3 in WAL mode with `synchronous` FULL or NORMAL and the table in one of its two layouts,
/// through prepared statements: `BEGIN` / `INSERT OR REPLACE` ... / `COMMIT` per batch,
/// `SELECT v FROM kv WHERE k = ?`, and `SELECT k, v FROM kv ORDER BY k`.
struct SQLiteContender: StoreContender {
    let name: String
    let synchronous: SQLiteConnection.Synchronous
    let layout: SQLiteConnection.Layout

    /// "SQLite FULL rowid", "SQLite FULL WITHOUT ROWID", ...
    static func name(_ synchronous: SQLiteConnection.Synchronous, _ layout: SQLiteConnection.Layout) -> String {
        "SQLite \(synchronous.rawValue) \(layout.rawValue)"
    }

    init(synchronous: SQLiteConnection.Synchronous, layout: SQLiteConnection.Layout) {
        self.name = Self.name(synchronous, layout)
        self.synchronous = synchronous
        self.layout = layout
    }

    private func connect(_ path: String) throws -> SQLiteConnection {
        try SQLiteConnection(directory: path, synchronous: synchronous, layout: layout)
    }

    func open(_ path: String) throws -> any BenchStore {
        try SQLiteStore(connect(path), immediate: false)
    }

    /// One connection per thread; `BEGIN IMMEDIATE` so that a writer waits for the write lock in
    /// the busy handler instead of failing.
    func openConcurrent(_ path: String, threads: Int) throws -> any ConcurrentWriter {
        var stores: [SQLiteStore] = []
        for _ in 0..<threads {
            stores.append(try SQLiteStore(connect(path), immediate: true))
        }
        return SQLiteConcurrentWriter(stores: stores)
    }

    /// The workloads of the shared code; those on the compacted store only for the FULL rowid
    /// table, the layout SQLite opens faster (and `synchronous` does not change what an open or
    /// a read does), to keep the run short.
    func supports(_ workload: Workload) -> Bool {
        guard !workload.usesEngineAPI else { return false }
        return !workload.usesCompactedStore || (synchronous == .full && layout == .rowid)
    }

    /// The SQLite library's version.
    static var version: String { SQLiteDatabase.version }
}

/// An open SQLite database with its prepared statements.
final class SQLiteStore: BenchStore {
    private let connection: SQLiteConnection
    private let begin: SQLiteStatement
    private let commit: SQLiteStatement
    private let rollback: SQLiteStatement
    private let insert: SQLiteStatement
    private let remove: SQLiteStatement
    private let select: SQLiteStatement
    private let scan: SQLiteStatement

    init(_ connection: SQLiteConnection, immediate: Bool) throws {
        self.connection = connection
        begin = try connection.prepare(immediate ? "BEGIN IMMEDIATE" : "BEGIN")
        commit = try connection.prepare("COMMIT")
        rollback = try connection.prepare("ROLLBACK")
        insert = try connection.prepare("INSERT OR REPLACE INTO kv(k, v) VALUES(?1, ?2)")
        remove = try connection.prepare("DELETE FROM kv WHERE k = ?1")
        select = try connection.prepare("SELECT v FROM kv WHERE k = ?1")
        scan = try connection.prepare("SELECT k, v FROM kv ORDER BY k")
    }

    /// Runs `body` inside `BEGIN` ... `COMMIT` (rolled back if it throws).
    private func transaction(_ body: () throws -> Void) throws {
        try begin.run()
        do {
            try body()
            try commit.run()
        } catch {
            try? rollback.run()
            throw error
        }
    }

    func put(_ records: ArraySlice<Record>) throws {
        try transaction {
            for record in records {
                try insert.bind(record.key, at: 1)
                try insert.bind(record.value, at: 2)
                try insert.run()
            }
        }
    }

    func delete(_ records: ArraySlice<Record>) throws {
        try transaction {
            for record in records {
                try remove.bind(record.key, at: 1)
                try remove.run()
            }
        }
    }

    func valueLength(_ key: [UInt8]) throws -> Int? {
        defer { select.reset() }
        try select.bind(key, at: 1)
        guard try select.step() else { return nil }
        return select.blob(0)?.count
    }

    func scanAll() throws -> (count: Int, bytes: Int) {
        defer { scan.reset() }
        var count = 0
        var bytes = 0
        while try scan.step() {
            let key = scan.blob(0) ?? []
            let value = scan.blob(1) ?? []
            count += 1
            bytes += key.count + value.count
        }
        return (count, bytes)
    }

    /// Rebuilds the database file with every page full and in order (`VACUUM`), then checkpoints.
    func compact() throws {
        try connection.execute("VACUUM")
        try settle()
    }

    /// Moves the WAL into the database and truncates it, so the files show the database's size.
    func settle() throws {
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    func close() throws {
        connection.close()
    }
}

/// The connections of `fillsync-concurrent`, one per writer thread.
///
/// `@unchecked Sendable`, lock discipline: the array never changes after `init`, and connection
/// `i` (with its statements) is used only by writer thread `i`; `settle()` and `close()` run on
/// the harness's thread after every writer thread has finished (`ThreadGang.run` returns only
/// then), so no connection is ever used by two threads at once. SQLite's own locks order the
/// writers.
final class SQLiteConcurrentWriter: ConcurrentWriter, @unchecked Sendable {
    private let stores: [SQLiteStore]

    init(stores: [SQLiteStore]) {
        self.stores = stores
    }

    func put(_ record: Record, thread: Int) throws {
        try stores[thread].put([record][...])
    }

    func settle() throws {
        try stores.first?.settle()
    }

    func close() throws {
        for store in stores { try store.close() }
    }
}
