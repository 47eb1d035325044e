/// Something the benches measure: a store (WALStore, SQLite, LevelDB, ...) or a reference such
/// as the physical limit of the disk.
public protocol Contender {
    /// The name in the table's contender column.
    var name: String { get }
    /// True when `workload` means something for this contender (a table row is made for it).
    func supports(_ workload: Workload) -> Bool
    /// Runs one repetition of `workload` and measures it.
    func measure(_ workload: Workload, in context: RunContext) throws -> Sample
    /// Runs one repetition of `workload` and measures each of its parts, in table order. The
    /// default is ``measure(_:in:)``'s sample as the only part; contenders that run the
    /// several-part workloads (`assets`, `compact`, `open-hints`) implement it.
    func measureParts(_ workload: Workload, in context: RunContext) throws -> [Measurement]
}

extension Contender {
    public func measureParts(_ workload: Workload, in context: RunContext) throws -> [Measurement] {
        [Measurement(try measure(workload, in: context))]
    }
}

/// A key–value store opened on one directory and used by one thread at a time.
public protocol BenchStore: AnyObject {
    /// Writes `records` in one durable commit (one transaction).
    func put(_ records: ArraySlice<Record>) throws
    /// Deletes the keys of `records` in one durable commit.
    func delete(_ records: ArraySlice<Record>) throws
    /// Reads the value of `key` into memory the way an app gets it (a `[UInt8]`) and returns its
    /// length; nil when the key is absent.
    func valueLength(_ key: [UInt8]) throws -> Int?
    /// Reads every record in key order, key and value; returns how many and their total bytes.
    func scanAll() throws -> (count: Int, bytes: Int)
    /// Brings the files to their resting size before they are measured (SQLite checkpoints its
    /// write-ahead log). Most stores do nothing.
    func settle() throws
    /// Rewrites the store as compactly as it can, as an app would after a bulk load (WALStore:
    /// `compact()`; SQLite: `VACUUM`). Stores without such a step do nothing.
    func compact() throws
    /// Closes the store. Idempotent: the harness may close a store twice.
    func close() throws
}

extension BenchStore {
    public func settle() throws {}
    public func compact() throws {}
}

/// A store opened for the writer threads of `fillsync-concurrent`.
public protocol ConcurrentWriter: Sendable {
    /// Commits `record` durably on its own, from writer thread number `thread`.
    func put(_ record: Record, thread: Int) throws
    /// Brings the files to their resting size (after every thread has finished).
    func settle() throws
    /// Closes everything (after every thread has finished). Idempotent.
    func close() throws
}

/// A contender that is a store: every workload is run by the shared code in
/// `StoreContender+Workloads.swift` through ``open(_:)``.
public protocol StoreContender: Contender {
    /// Opens (creating when needed) the store in the directory at `path`.
    func open(_ path: String) throws -> any BenchStore
    /// Opens the store at `path` for `threads` writer threads (one connection each where the
    /// store needs that). Throws for stores the bench does not run concurrently.
    func openConcurrent(_ path: String, threads: Int) throws -> any ConcurrentWriter
}

extension StoreContender {
    /// Every workload but those that use the engine's own API (blobs, compaction).
    public func supports(_ workload: Workload) -> Bool { !workload.usesEngineAPI }

    public func openConcurrent(_ path: String, threads: Int) throws -> any ConcurrentWriter {
        throw BenchError("\(name) is not run with concurrent writers")
    }
}
