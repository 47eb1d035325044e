/// The store's keys in byte order, for prefix scans whose cost follows the number of keys under
/// the prefix (plus a logarithm of the store), not the size of the store.
///
/// A one-level B-tree: a sorted array of sorted chunks of at most ``chunkCapacity`` keys. Insert
/// and remove cost a binary search plus a move inside one chunk.
struct SortedKeys {
    static let chunkCapacity = 512
    private var chunks: [[[UInt8]]] = []
    private(set) var count = 0

    init() {}

    /// Builds the set from keys in any order, sorting once (used when the store opens).
    init(unsorted keys: [[UInt8]]) {
        self.init(sorted: keys.sorted { compareBytes($0, $1) < 0 })
    }

    /// Builds the set from distinct keys already in ascending order (a pack's hint file).
    init(sorted: [[UInt8]]) {
        let half = Self.chunkCapacity / 2
        var start = 0
        while start < sorted.count {
            let end = min(start + half, sorted.count)
            chunks.append(Array(sorted[start..<end]))
            start = end
        }
        count = sorted.count
    }

    /// The index of the first chunk whose last key is ≥ `key` (or the last chunk).
    private func chunkIndex(for key: [UInt8]) -> Int {
        var low = 0
        var high = chunks.count - 1
        while low < high {
            let mid = (low + high) / 2
            if compareBytes(chunks[mid][chunks[mid].count - 1], key) < 0 { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The position of the first key ≥ `key` in `chunk`.
    private static func lowerBound(_ chunk: [[UInt8]], _ key: [UInt8]) -> Int {
        var low = 0
        var high = chunk.count
        while low < high {
            let mid = (low + high) / 2
            if compareBytes(chunk[mid], key) < 0 { low = mid + 1 } else { high = mid }
        }
        return low
    }

    mutating func insert(_ key: [UInt8]) {
        guard !chunks.isEmpty else {
            chunks = [[key]]
            count = 1
            return
        }
        let c = chunkIndex(for: key)
        let position = Self.lowerBound(chunks[c], key)
        if position < chunks[c].count && compareBytes(chunks[c][position], key) == 0 { return }
        chunks[c].insert(key, at: position)
        count += 1
        if chunks[c].count > Self.chunkCapacity {
            let upper = Array(chunks[c][(Self.chunkCapacity / 2)...])
            chunks[c].removeSubrange((Self.chunkCapacity / 2)...)
            chunks.insert(upper, at: c + 1)
        }
    }

    mutating func remove(_ key: [UInt8]) {
        guard !chunks.isEmpty else { return }
        let c = chunkIndex(for: key)
        let position = Self.lowerBound(chunks[c], key)
        guard position < chunks[c].count, compareBytes(chunks[c][position], key) == 0 else { return }
        chunks[c].remove(at: position)
        count -= 1
        if chunks[c].isEmpty { chunks.remove(at: c) }
    }

    /// The keys that start with `prefix`, in order.
    func keys(withPrefix prefix: [UInt8]) -> [[UInt8]] {
        guard !chunks.isEmpty else { return [] }
        var result: [[UInt8]] = []
        var c = chunkIndex(for: prefix)
        var position = Self.lowerBound(chunks[c], prefix)
        while c < chunks.count {
            let chunk = chunks[c]
            while position < chunk.count {
                guard hasPrefix(chunk[position], prefix) else { return result }
                result.append(chunk[position])
                position += 1
            }
            c += 1
            position = 0
        }
        return result
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
