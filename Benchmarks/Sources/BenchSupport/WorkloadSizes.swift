/// How much `assets`, `compact`, `open-hints`, `index-memory` and the compacted-store workloads
/// write: set by `--quick`, `--scale`, `--compact-bytes`, `--full`, and by whether `--workloads`
/// names them. Their full
/// sizes (a gigabyte of log; a million records) take a minute or two each, too long for the
/// default run of every workload, which uses smaller ones.
public struct WorkloadSizes: Sendable, Codable {
    /// One size of blob that `assets` writes, and how many of it.
    public struct AssetClass: Sendable, Codable, Equatable {
        /// Bytes per blob.
        public var bytes: Int
        /// Blobs of that size, one per durable commit.
        public var count: Int
    }

    /// The blobs of `assets`, smallest first.
    public var assetClasses: [AssetClass]
    /// The log size (``Engine/Statistics/bytesOnDisk``) at which `compact` stops overwriting and
    /// compacts.
    public var compactLogBytes: Int
    /// Seconds of single-record commits that `compact` times without a compaction, before it
    /// starts one: the baseline of the stall figures.
    public var stallBaselineSeconds: Double
    /// Records in the stores that `open-hints` and `index-memory` open.
    public var openRecords: Int
    /// Records in the compacted store of `open-compacted`, `readmissing` and `memory-compacted`
    /// (one per contender): as many as `open-hints` opens, with the same scaling.
    public var compactedRecords: Int

    /// The log `compact` builds when named in `--workloads` (times the scale).
    public static let fullCompactLogBytes = 1 << 30
    /// The log `compact` builds in the default run of every workload (times the scale).
    public static let defaultRunCompactLogBytes = 128 << 20
    /// The log `compact` builds with `--quick` (times the scale).
    public static let quickCompactLogBytes = 32 << 20
    /// Records of `open-hints` per record of the data set (N) when named in `--workloads` and with
    /// `--quick`: 1,000,000 and 50,000.
    public static let fullOpenRecordsPerRecord = 10
    /// The same in the default run of every workload: 200,000.
    public static let defaultRunOpenRecordsPerRecord = 2

    /// The sizes `options` ask for.
    public init(_ options: BenchOptions) {
        func scaled(_ value: Int) -> Int { max(1, Int((Double(value) * options.scale).rounded())) }
        let mebibyte = 1 << 20
        assetClasses = [
            AssetClass(bytes: mebibyte, count: scaled(options.quick ? 8 : 64)),
            AssetClass(bytes: 64 * mebibyte, count: scaled(options.quick ? 1 : 4)),
        ]
        func named(_ workload: Workload) -> Bool { options.full || (options.workloads?.contains(workload) ?? false) }
        compactLogBytes = options.compactBytes ?? scaled(
            options.quick ? Self.quickCompactLogBytes
                : named(.compact) ? Self.fullCompactLogBytes : Self.defaultRunCompactLogBytes)
        stallBaselineSeconds = options.quick ? 1 : 2
        openRecords = options.recordCount
            * (options.quick || named(.openHints) || named(.indexMemory)
                ? Self.fullOpenRecordsPerRecord : Self.defaultRunOpenRecordsPerRecord)
        let compactedNamed = Workload.allCases.contains { $0.usesCompactedStore && named($0) }
        compactedRecords = options.recordCount
            * (options.quick || compactedNamed ? Self.fullOpenRecordsPerRecord : Self.defaultRunOpenRecordsPerRecord)
    }

    /// The line under the data set's in the table's header that gives these sizes, for those of
    /// `workloads` that have one; nil when none runs.
    public func line(for workloads: [Workload]) -> String? {
        var parts: [String] = []
        if workloads.contains(.assets) {
            let classes = assetClasses.map { "\($0.count) × \(TableFormat.bytes(UInt64($0.bytes)))" }
            parts.append("assets \(classes.joined(separator: " and ")), random and JSON")
        }
        if workloads.contains(.compact) {
            parts.append("compact overwrites until the log holds \(TableFormat.bytes(UInt64(compactLogBytes))), "
                + "\(TableFormat.fixed(stallBaselineSeconds, 0)) s of baseline commits")
        }
        if workloads.contains(.openHints) || workloads.contains(.indexMemory) {
            parts.append("open-hints and index-memory open \(TableFormat.count(Double(openRecords))) records")
        }
        if workloads.contains(where: \.usesCompactedStore) {
            parts.append("open-compacted, readmissing and memory-compacted use a compacted store of "
                + "\(TableFormat.count(Double(compactedRecords))) records")
        }
        return parts.isEmpty ? nil : "sizes: " + parts.joined(separator: "; ")
    }
}
