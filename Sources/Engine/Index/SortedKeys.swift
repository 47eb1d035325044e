/// The store's keys in byte order, for prefix scans whose cost follows the number of keys under
/// the prefix (plus a logarithm of the store), not the size of the store.
///
/// A one-level B-tree: a sorted array of sorted chunks of at most ``chunkCapacity`` keys. Insert
/// and remove cost a binary search plus a move inside one chunk.
///
/// Each chunk keeps the first eight bytes of its keys as big-endian integers in an array of its
/// own (``KeyPrefix``), and the set keeps the prefix of every chunk's last key. The binary
/// searches compare those contiguous integers and read a key's heap buffer only when two prefixes
/// are equal: a search over keys that differ early (UUIDs, hashes, counters) touches a few cache
/// lines instead of one buffer per step. Without this, inserting a commit's random keys cost
/// ~1 µs each, mostly cache misses: a sixth of a 1,000-record commit's time.
struct SortedKeys {
    static let chunkCapacity = 512

    private struct Chunk {
        var keys: [[UInt8]]
        /// `KeyPrefix.of(keys[i])` for every `i`.
        var prefixes: [UInt64]

        init(_ keys: some Collection<[UInt8]>) {
            self.keys = Array(keys)
            prefixes = self.keys.map(KeyPrefix.of)
        }
    }
    private var chunks: [Chunk] = []
    /// `KeyPrefix` of every chunk's last key, for the search over chunks.
    private var lastPrefixes: [UInt64] = []
    private(set) var count = 0

    init() {}

    /// Builds the set from distinct keys already in ascending order (a pack's hint file).
    init(sorted: [[UInt8]]) {
        let half = Self.chunkCapacity / 2
        var start = 0
        while start < sorted.count {
            let end = min(start + half, sorted.count)
            chunks.append(Chunk(sorted[start..<end]))
            lastPrefixes.append(chunks[chunks.count - 1].prefixes[end - start - 1])
            start = end
        }
        count = sorted.count
    }

    /// The order of `key` (whose prefix is `prefix`) against `other` (whose prefix is
    /// `otherPrefix`): the prefixes settle it unless they are equal.
    @inline(__always)
    private static func compare(_ key: [UInt8], _ prefix: UInt64, _ other: @autoclosure () -> [UInt8], _ otherPrefix: UInt64) -> Int {
        if prefix != otherPrefix { return prefix < otherPrefix ? -1 : 1 }
        return compareBytes(key, other())
    }

    /// The index of the first chunk whose last key is ≥ `key` (or the last chunk).
    private func chunkIndex(for key: [UInt8], prefix: UInt64) -> Int {
        var low = 0
        var high = chunks.count - 1
        while low < high {
            let mid = (low + high) / 2
            let last = chunks[mid].keys.count - 1
            if Self.compare(chunks[mid].keys[last], lastPrefixes[mid], key, prefix) < 0 { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The position of the first key ≥ `key` in `chunk`.
    private static func lowerBound(_ chunk: Chunk, _ key: [UInt8], prefix: UInt64) -> Int {
        var low = 0
        var high = chunk.keys.count
        while low < high {
            let mid = (low + high) / 2
            if compare(chunk.keys[mid], chunk.prefixes[mid], key, prefix) < 0 { low = mid + 1 } else { high = mid }
        }
        return low
    }

    mutating func insert(_ key: [UInt8]) {
        let prefix = KeyPrefix.of(key)
        guard !chunks.isEmpty else {
            chunks = [Chunk([key])]
            lastPrefixes = [prefix]
            count = 1
            return
        }
        let c = chunkIndex(for: key, prefix: prefix)
        let position = Self.lowerBound(chunks[c], key, prefix: prefix)
        if position < chunks[c].keys.count && chunks[c].prefixes[position] == prefix
            && compareBytes(chunks[c].keys[position], key) == 0 { return }
        chunks[c].keys.insert(key, at: position)
        chunks[c].prefixes.insert(prefix, at: position)
        count += 1
        if chunks[c].keys.count > Self.chunkCapacity {
            let half = Self.chunkCapacity / 2
            let upper = Chunk(chunks[c].keys[half...])
            chunks[c].keys.removeSubrange(half...)
            chunks[c].prefixes.removeSubrange(half...)
            chunks.insert(upper, at: c + 1)
            lastPrefixes.insert(upper.prefixes[upper.prefixes.count - 1], at: c + 1)
        }
        lastPrefixes[c] = chunks[c].prefixes[chunks[c].prefixes.count - 1]
    }

    mutating func remove(_ key: [UInt8]) {
        guard !chunks.isEmpty else { return }
        let prefix = KeyPrefix.of(key)
        let c = chunkIndex(for: key, prefix: prefix)
        let position = Self.lowerBound(chunks[c], key, prefix: prefix)
        guard position < chunks[c].keys.count, chunks[c].prefixes[position] == prefix,
              compareBytes(chunks[c].keys[position], key) == 0 else { return }
        chunks[c].keys.remove(at: position)
        chunks[c].prefixes.remove(at: position)
        count -= 1
        if chunks[c].keys.isEmpty {
            chunks.remove(at: c)
            lastPrefixes.remove(at: c)
        } else {
            lastPrefixes[c] = chunks[c].prefixes[chunks[c].prefixes.count - 1]
        }
    }

    /// Up to `limit` keys in `range`, ascending (descending when `reverse`), starting strictly
    /// after `cursor` in that direction when it is given: a scan resumes from the last key it
    /// returned. Costs a binary search plus the keys returned.
    func keys(in range: LogStore.KeyRange, after cursor: [UInt8]?, reverse: Bool, limit: Int) -> [[UInt8]] {
        guard !chunks.isEmpty, limit > 0 else { return [] }
        var result: [[UInt8]] = []
        if !reverse {
            // The first position at or past the low end and past the cursor.
            var (c, position) = (0, 0)
            switch range.lower {
            case .unbounded: break
            case .inclusive(let key): (c, position) = self.position(of: key, after: false)
            case .exclusive(let key): (c, position) = self.position(of: key, after: true)
            }
            if let cursor {
                let resume = self.position(of: cursor, after: true)
                if (resume.0, resume.1) > (c, position) { (c, position) = resume }
            }
            while c < chunks.count {
                let chunk = chunks[c].keys
                while position < chunk.count {
                    guard range.isBelowUpper(chunk[position]), result.count < limit else { return result }
                    result.append(chunk[position])
                    position += 1
                }
                c += 1
                position = 0
            }
        } else {
            // One before the first position past the high end and at or past the cursor.
            var (c, position) = (chunks.count, 0)
            switch range.upper {
            case .unbounded: break
            case .inclusive(let key): (c, position) = self.position(of: key, after: true)
            case .exclusive(let key): (c, position) = self.position(of: key, after: false)
            }
            if let cursor {
                let resume = self.position(of: cursor, after: false)
                if (resume.0, resume.1) < (c, position) { (c, position) = resume }
            }
            while true {
                // Step back one key.
                if position == 0 {
                    guard c > 0 else { return result }
                    c -= 1
                    position = chunks[c].keys.count
                }
                position -= 1
                let key = chunks[c].keys[position]
                guard range.isAboveLower(key), result.count < limit else { return result }
                result.append(key)
            }
        }
        return result
    }

    /// The position (chunk, index) of the first key ≥ `key` (> `key` when `after`), normalized
    /// so that the index is inside its chunk or the position is (`chunks.count`, 0), the end.
    private func position(of key: [UInt8], after: Bool) -> (Int, Int) {
        let prefix = KeyPrefix.of(key)
        let c = chunkIndex(for: key, prefix: prefix)
        var position = Self.lowerBound(chunks[c], key, prefix: prefix)
        if after, position < chunks[c].keys.count, chunks[c].prefixes[position] == prefix,
            compareBytes(chunks[c].keys[position], key) == 0 {
            position += 1
        }
        return position < chunks[c].keys.count ? (c, position) : (c + 1 < chunks.count ? (c + 1, 0) : (chunks.count, 0))
    }

}

/// The first eight bytes of a key as a big-endian integer, zero-padded: if `of(a) < of(b)` then
/// `a < b` in byte order (a padding zero stands where the shorter key ended, and a key that ends
/// first is the smaller); equal prefixes say nothing.
enum KeyPrefix {
    @inline(__always)
    static func of(_ key: [UInt8]) -> UInt64 {
        key.withUnsafeBytes { bytes in
            if bytes.count >= 8 { return UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)) }
            var value: UInt64 = 0
            for index in 0..<8 {
                value <<= 8
                if index < bytes.count { value |= UInt64(bytes[index]) }
            }
            return value
        }
    }
}

/// Merges ascending runs of keys into one ascending run, keeping one copy of keys found in
/// several runs.
func mergeSortedRuns(_ runs: [[[UInt8]]]) -> [[UInt8]] {
    var runs = runs.filter { !$0.isEmpty }
    while runs.count > 1 {
        var next: [[[UInt8]]] = []
        for pair in stride(from: 0, to: runs.count, by: 2) {
            next.append(pair + 1 < runs.count ? mergeTwo(runs[pair], runs[pair + 1]) : runs[pair])
        }
        runs = next
    }
    return runs.first ?? []
}

private func mergeTwo(_ a: [[UInt8]], _ b: [[UInt8]]) -> [[UInt8]] {
    var result: [[UInt8]] = []
    result.reserveCapacity(a.count + b.count)
    var i = 0
    var j = 0
    while i < a.count && j < b.count {
        let order = compareBytes(a[i], b[j])
        if order < 0 {
            result.append(a[i]); i += 1
        } else if order > 0 {
            result.append(b[j]); j += 1
        } else {
            result.append(a[i]); i += 1; j += 1
        }
    }
    result.append(contentsOf: a[i...])
    result.append(contentsOf: b[j...])
    return result
}
