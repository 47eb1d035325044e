/// Records made one at a time from a seed, the way ``DataSet`` makes them (16 random key bytes,
/// a ``ValueGenerator`` value), for stores too large to hold every record in memory
/// (`open-hints`). Keys are not checked for uniqueness: 128 random bits do not repeat in practice,
/// and the workloads check the store's key count.
public struct RecordStream: Sendable {
    private var rng: SplitMix64

    /// The stream fixed by `seed`.
    public init(seed: UInt64) {
        rng = SplitMix64(seed: seed)
    }

    /// The next `count` records.
    public mutating func next(_ count: Int) -> [Record] {
        (0..<count).map { _ in Record(key: rng.bytes(16), value: ValueGenerator.value(using: &rng)) }
    }
}
