/// The benchmark workloads, named after leveldb's `db_bench`.
public enum Workload: String, CaseIterable, Sendable, Codable {
    case fillseq
    case fillbatch100
    case fillsync
    case fillsyncConcurrent = "fillsync-concurrent"
    case overwrite
    case readrandomWarm = "readrandom-warm"
    case readrandomCold = "readrandom-cold"
    case readseq
    case delete
    case open
    case openCompacted = "open-compacted"
    case readmissing
    case memoryCompacted = "memory-compacted"
    case readseqCached = "readseq-cached"
    case readrandomCached = "readrandom-cached"
    // Blobs before the workloads that write a gigabyte: measured after them, a blob's syncs
    // wait behind their dirty pages' writeback (64 MiB writes at 0.3x plain files instead of 0.9x).
    case assets
    case openHints = "open-hints"
    case indexMemory = "index-memory"
    case compact

    /// Records per durable commit in the fill, overwrite and delete workloads.
    public static let bulkBatchSize = 1_000
    /// The reads `readrandom-cold` also times on their own, first after the reopen.
    public static let coldFirstReads = 1_000
    /// The name of that part of `readrandom-cold`.
    public static let coldFirstReadsPart = "first 1,000"
    /// Writer threads of `fillsync-concurrent`.
    public static let concurrentThreads = 8

    /// True for the workloads that write: each repetition starts from a fresh directory.
    public var writes: Bool {
        switch self {
        case .fillseq, .fillbatch100, .fillsync, .fillsyncConcurrent, .overwrite, .delete: true
        case .readrandomWarm, .readrandomCold, .readseq, .open, .openCompacted, .readmissing, .memoryCompacted,
            .readseqCached, .readrandomCached, .openHints, .indexMemory, .compact, .assets:
            false
        }
    }

    /// True for the workloads that use WALStore's own API (blobs, compaction, tables, its
    /// statistics) and so run on WALStore only (`assets` also on the plain loop: plain files;
    /// `readseq-cached` and `readrandom-cached` also on the plain loop: a C decode of WALStore's
    /// table file).
    public var usesEngineAPI: Bool {
        switch self {
        case .openHints, .indexMemory, .compact, .assets, .readseqCached, .readrandomCached: true
        default: false
        }
    }

    /// True for the reads of the store of N records compacted into one table, every table block
    /// in the engine's cache, beside a plain C decode of that table: `readseq-cached`,
    /// `readrandom-cached`.
    public var readsCachedTable: Bool {
        self == .readseqCached || self == .readrandomCached
    }

    /// True for the workloads on the compacted store of ``WorkloadSizes/compactedRecords`` records
    /// (``StoreContender/compactedStore(in:)``): `open-compacted`, `readmissing`, `memory-compacted`.
    public var usesCompactedStore: Bool {
        switch self {
        case .openCompacted, .readmissing, .memoryCompacted: true
        default: false
        }
    }

    /// The parts of `open-compacted`.
    public static let coldPart = "cold"
    public static let warmPart = "warm"

    /// The most repetitions the workload runs, whatever `--quick` says: `compact` builds a log of
    /// up to a gigabyte and compacts it away, so it runs once.
    public var maximumRepetitions: Int {
        self == .compact ? 1 : Int.max
    }

    /// One line on what the workload does, for `--help` and the README.
    public var summary: String {
        switch self {
        case .fillseq: "insert N records into an empty store, 1,000 per durable commit"
        case .fillbatch100: "insert N records into an empty store, 100 per durable commit"
        case .fillsync: "insert min(N, 5,000) records, one per durable commit"
        case .fillsyncConcurrent: "as fillsync, from 8 threads committing at once"
        case .overwrite: "N puts to existing keys in random order, 1,000 per durable commit"
        case .readrandomWarm: "N point reads of random keys, second pass (caches warm)"
        case .readrandomCold:
            "N point reads of random keys right after reopening with the OS page cache dropped; the first 1,000 also on their own"
        case .readseq: "scan every record in key order reading every value (store freshly opened)"
        case .delete: "delete all N keys, 1,000 per durable commit"
        case .open: "open the store of N records with the OS page cache dropped, plus its first point read"
        case .openCompacted:
            "open a compacted store of 10 N records (2 N in the default run), plus its first point read: page cache dropped (cold), and not (warm)"
        case .readmissing: "N point reads of absent keys (16 random bytes, none in the store) on the compacted store, second pass"
        case .memoryCompacted: "the compacted store opened in a fresh child process, plus its first point read: resident memory growth per key"
        case .readseqCached:
            "scan every record of the N-record store compacted into one table, every block cached (second scan); beside a C decode of that table"
        case .readrandomCached:
            "N point reads of random keys of that compacted store, every block cached (second pass); beside C lookups in that table"
        case .openHints: "open 10 N records (2 N in the default run) cold: never compacted (segment hints), and after compact() (tables)"
        case .indexMemory: "open-hints' two stores opened in a fresh child process: its memory growth per key (RSS, heap)"
        case .compact:
            "overwrite N keys to a 1 GiB log (128 MiB in the default run), compact() beside one-record commits "
                + "and reads: space, stalls; runs once"
        case .assets: "blobs of 1 and 64 MiB, random and JSON, one per durable commit: write, stream, map, stream cold; vs plain files"
        }
    }

    /// Parses a comma-separated list of workload names; the failure names the first unknown one.
    public static func parseList(_ text: String) -> Result<[Workload], ParseFailure> {
        var result: [Workload] = []
        for name in text.split(separator: ",", omittingEmptySubsequences: true) {
            let trimmed = name.trimmingCharacters(in: " ")
            guard let workload = Workload(rawValue: trimmed) else { return .failure(ParseFailure(name: trimmed)) }
            if !result.contains(workload) { result.append(workload) }
        }
        return result.isEmpty ? .failure(ParseFailure(name: text)) : .success(result)
    }

    /// An unknown workload name.
    public struct ParseFailure: Error {
        public let name: String
    }
}

extension Substring {
    /// The text without leading and trailing `character`s.
    func trimmingCharacters(in character: Character) -> String {
        var slice = self[...]
        while slice.first == character { slice = slice.dropFirst() }
        while slice.last == character { slice = slice.dropLast() }
        return String(slice)
    }
}
