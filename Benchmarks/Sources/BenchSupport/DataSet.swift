/// Everything a run writes and reads, generated once from a fixed seed so that every contender
/// (and every run) sees the same keys, values and orders.
public struct DataSet: Sendable {
    /// The seed of every run.
    public static let seed: UInt64 = 0x57A1_5703_E000_0001

    /// The records in insertion order. Keys are random, so this order is random in key order.
    public let records: [Record]
    /// The records of `overwrite`: every key once, in a random order, each with another value.
    public let overwrites: [Record]
    /// Indexes into ``records`` for `readrandom`: uniform random draws (with repeats).
    public let readOrder: [Int]
    /// Records in the single-record-commit workloads (`fillsync`, `fillsync-concurrent`).
    public let syncCount: Int

    /// The number of records.
    public var count: Int { records.count }
    /// Key plus value bytes of all records.
    public let rawBytes: Int
    /// The shortest, mean and longest value, in bytes.
    public let valueLengths: (minimum: Int, mean: Double, maximum: Int)

    /// Generates `count` records (keys unique) and the orders the workloads use.
    public init(count: Int, syncLimit: Int = 5_000) {
        var rng = SplitMix64(seed: Self.seed)
        var seen = Set<[UInt8]>(minimumCapacity: count)
        var records: [Record] = []
        records.reserveCapacity(count)
        while records.count < count {
            let key = rng.bytes(16)
            guard seen.insert(key).inserted else { continue }
            records.append(Record(key: key, value: ValueGenerator.value(using: &rng)))
        }
        var order = Array(0..<count)
        rng.shuffle(&order)
        // Each overwrite takes the value of the record half the data set away: same length
        // distribution, different bytes.
        overwrites = order.map { index in
            Record(key: records[index].key, value: records[(index + count / 2) % count].value)
        }
        readOrder = (0..<count).map { _ in rng.below(count) }
        self.records = records
        syncCount = min(count, syncLimit)
        rawBytes = records.reduce(0) { $0 + $1.rawBytes }
        let lengths = records.map(\.value.count)
        valueLengths = (
            lengths.min() ?? 0,
            count == 0 ? 0 : Double(lengths.reduce(0, +)) / Double(count),
            lengths.max() ?? 0)
    }

    /// The first `syncCount` records: what the single-record-commit workloads write.
    public var syncRecords: ArraySlice<Record> { records.prefix(syncCount) }
}
