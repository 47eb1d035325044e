/// Builds a Bloom filter of a table (FORMAT.md, "Table files", "Filter block"): one filter for
/// a partition's keys (version 5) or the whole table's (version 4), of `bitsPerKey` bits a key (at least 64), probed `k` times per key by double
/// hashing of the key's XXH64: probe `i` sets bit `(h1 + i·h2) mod m`, where `h1` is the hash's low
/// 32 bits and `h2` its high 32 bits with the lowest bit set.
struct BloomFilterBuilder {
    let bitsPerKey: Int
    private var hashes: [UInt64] = []

    init(bitsPerKey: Int = 10) {
        precondition(bitsPerKey >= 1, "a filter holds at least one bit a key")
        self.bitsPerKey = bitsPerKey
    }

    /// The number of probes: `bitsPerKey · ln 2` (rounded down), between 1 and 30.
    var probes: Int { max(1, min(TableFormat.maxFilterProbes, bitsPerKey * 69 / 100)) }

    mutating func add(_ key: [UInt8]) { hashes.append(XXHash64.hash(key[...])) }

    /// Keys added so far.
    var count: Int { hashes.count }

    /// The filter block's raw contents: the bit array (bit `j` is bit `j % 8` of byte `j / 8`),
    /// then the probe count as one byte.
    func finish() -> [UInt8] {
        let wanted = max(TableFormat.minFilterBits, hashes.count * bitsPerKey)
        let byteCount = (wanted + 7) / 8
        let bitCount = UInt64(byteCount * 8)
        var bits = [UInt8](repeating: 0, count: byteCount + 1)
        for hash in hashes {
            for position in BloomFilter.positions(hash, probes: probes, bitCount: bitCount) {
                bits[Int(position / 8)] |= 1 << (position % 8)
            }
        }
        bits[byteCount] = UInt8(probes)
        return bits
    }
}

/// A table's Bloom filter, as read from a filter partition (version 5) or its filter block
/// (version 4): answers "certainly absent" or "maybe present" for a key of the blocks it covers.
struct BloomFilter: Sendable {
    private let bits: [UInt8]

    /// The bytes the filter holds, for the block cache's accounting.
    var byteCount: Int { bits.count }
    private let bitCount: UInt64
    let probes: Int

    /// Decodes a filter's raw contents. A filter of at least one key (`coversKeys`: every filter
    /// partition, and the filter block of a table with data) has at least
    /// ``minimumSetBits(probes:)`` bits set: fewer (an all-zero filter, say) would make keys the
    /// table holds read as absent, so it is corruption even when its crc32 holds.
    init(raw: [UInt8], path: String, offset: UInt64, coversKeys: Bool = true) throws(EngineError) {
        guard raw.count >= TableFormat.minFilterBits / 8 + 1 else {
            throw .corruption("table filter of \(raw.count) bytes is shorter than the smallest filter", path: path, offset: offset)
        }
        let probes = Int(raw[raw.count - 1])
        guard (1...TableFormat.maxFilterProbes).contains(probes) else {
            throw .corruption("table filter declares \(probes) probes", path: path, offset: offset)
        }
        self.probes = probes
        bits = Array(raw.dropLast())
        bitCount = UInt64(bits.count) * 8
        if coversKeys {
            let set = bits.reduce(0) { $0 + $1.nonzeroBitCount }
            guard set >= Self.minimumSetBits(probes: probes) else {
                throw .corruption(
                    "table filter has \(set) of its \(bitCount) bits set, fewer than one key's \(Self.minimumSetBits(probes: probes)) probes set (it would hide keys the table holds); run LogStore.salvage(at:), which rebuilds filters",
                    path: path, offset: offset)
            }
        }
    }

    /// The fewest bits a filter of at least one key has set: one key's probes, which are
    /// distinct for the first 8 (the bit count is a multiple of 8 and the step `h2` odd, so
    /// `i·h2 mod m` repeats no sooner than every 8 probes).
    static func minimumSetBits(probes: Int) -> Int { min(probes, 8) }

    /// False only when `key` is certainly not in the table.
    func mayContain(_ key: [UInt8]) -> Bool {
        key.withUnsafeBytes { mayContain($0) }
    }

    /// ``mayContain(_:)-([UInt8])`` for a key in place; probes the bits without allocating.
    func mayContain(_ key: UnsafeRawBufferPointer) -> Bool {
        let hash = XXHash64.hash(key)
        let h1 = hash & 0xFFFF_FFFF
        let h2 = (hash >> 32) | 1
        let probes = UInt64(probes)
        let bitCount = bitCount
        return bits.withUnsafeBytes { bits in
            var i: UInt64 = 0
            while i < probes {
                let position = (h1 &+ i &* h2) % bitCount
                if bits[Int(position / 8)] & (1 << (position % 8)) == 0 { return false }
                i += 1
            }
            return true
        }
    }

    /// The bit positions probed for a key whose XXH64 is `hash`.
    static func positions(_ hash: UInt64, probes: Int, bitCount: UInt64) -> [UInt64] {
        let h1 = hash & 0xFFFF_FFFF
        let h2 = (hash >> 32) | 1
        return (0..<UInt64(probes)).map { i in (h1 &+ i &* h2) % bitCount }
    }
}
