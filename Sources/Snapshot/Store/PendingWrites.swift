import Engine

/// Writes planned and not yet committed: what a save planned while earlier saves' commit is
/// still being written reads on top of the store (``RecordSpace/pending``). Each layer is one
/// save's batch, in the engine's keys; a later layer wins.
struct PendingWrites: Sendable {
    /// What a pending write leaves under a key.
    enum Value: Sendable, Equatable {
        case put([UInt8], external: Bool)
        case deleted
    }

    /// One save's writes, sorted once.
    final class Layer: Sendable {
        let values: [PendingKey: Value]
        /// The keys of `values`, byte-wise ascending.
        let keys: [[UInt8]]

        init(_ entries: [WriteBatch.Entry]) {
            var values: [PendingKey: Value] = Dictionary(minimumCapacity: entries.count)
            for entry in entries {
                switch entry {
                case .put(let key, let value): values[PendingKey(key)] = .put(value, external: false)
                case .putExternal(let key, let value): values[PendingKey(key)] = .put(value, external: true)
                case .delete(let key): values[PendingKey(key)] = .deleted
                }
            }
            self.values = values
            keys = values.keys.map(\.bytes).sorted { $0.lexicographicallyPrecedes($1) }
        }

        /// The keys of `range`, ascending.
        func keys(in range: LogStore.KeyRange) -> ArraySlice<[UInt8]> {
            var low = 0
            var high = keys.count
            while low < high {
                let mid = (low + high) / 2
                if Self.isBelow(keys[mid], range.lower) { low = mid + 1 } else { high = mid }
            }
            var end = low
            while end < keys.count && range.contains(keys[end]) { end += 1 }
            return keys[low..<end]
        }

        private static func isBelow(_ key: [UInt8], _ lower: LogStore.KeyRange.Bound) -> Bool {
            switch lower {
            case .unbounded: false
            case .inclusive(let bound): key.lexicographicallyPrecedes(bound)
            case .exclusive(let bound): !bound.lexicographicallyPrecedes(key)
            }
        }
    }

    /// Oldest first.
    private(set) var layers: [Layer] = []

    static let none = PendingWrites()

    var isEmpty: Bool { layers.isEmpty }

    /// `self` with `entries` (one save's batch) on top.
    func adding(_ entries: [WriteBatch.Entry]) -> PendingWrites {
        guard !entries.isEmpty else { return self }
        var result = self
        result.layers.append(Layer(entries))
        return result
    }

    /// The pending value of `key`, `nil` when no pending write touches it.
    func value(forKey key: [UInt8]) -> Value? {
        guard !layers.isEmpty else { return nil }
        let k = PendingKey(key)
        for layer in layers.reversed() {
            if let value = layer.values[k] { return value }
        }
        return nil
    }

    /// Every pending write in `range`, ascending (descending with `reverse`), the newest per key.
    func entries(in range: LogStore.KeyRange, reverse: Bool) -> [(key: [UInt8], value: Value)] {
        var found: [PendingKey: Value] = [:]
        for layer in layers {
            for key in layer.keys(in: range) { found[PendingKey(key)] = layer.values[PendingKey(key)] }
        }
        let sorted = found.map { (key: $0.key.bytes, value: $0.value) }.sorted { $0.key.lexicographicallyPrecedes($1.key) }
        return reverse ? sorted.reversed() : sorted
    }
}

/// A key as a dictionary key, hashed in one pass over its bytes.
struct PendingKey: Hashable, Sendable {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    func hash(into hasher: inout Hasher) { bytes.withUnsafeBytes { hasher.combine(bytes: $0) } }
}
