import Foundation

/// The matches of a fetch, gathered as they are found, and its window (offset and limit) in
/// the order of its sort descriptors, ties broken by record key order (the primary key's).
///
/// With a sort and a limit, only the first offset + limit matches so far are kept, in a
/// bounded heap (a top-k selection), so a fetch of 50 out of 100,000 matches holds 50 of them,
/// not all; without a limit every match is kept and sorted once at the end, as
/// ``PredicateEvaluator/sorted(_:by:)`` sorts.
struct FetchWindow<Element> {
    /// One match and its sort key.
    private struct Entry {
        let element: Element
        let key: SortKey
    }

    private let descriptors: [FetchSortDescriptor]
    private let offset: Int
    private let limit: Int?
    /// With a limit: how many matches the window needs (offset + limit).
    private let needed: Int?
    /// With a sort and a limit: `needed`, the most matches held.
    private let capacity: Int?
    /// Every match (no capacity), or a max-heap of the first `capacity` (the last of them on top).
    private var entries: [Entry] = []

    init(sortBy descriptors: [FetchSortDescriptor], offset: Int?, limit: Int?) {
        self.descriptors = descriptors
        self.offset = offset ?? 0
        self.limit = limit
        needed = limit.map { Self.window(offset: offset, limit: $0) }
        capacity = descriptors.isEmpty ? nil : needed
    }

    /// offset + limit, or `Int.max` when that does not fit.
    static func window(offset: Int?, limit: Int) -> Int {
        let (sum, overflow) = (offset ?? 0).addingReportingOverflow(limit)
        return overflow ? Int.max : sum
    }

    /// How many matches are held.
    var count: Int { entries.count }

    /// Whether the matches held fill the window (with a limit), so that, when matches arrive in
    /// record key order and there is no sort, no later match can be in it.
    var isFull: Bool { needed.map { entries.count >= $0 } ?? false }

    /// Takes a match whose sort values (one per descriptor, as
    /// ``PredicateEvaluator/value(at:of:)`` reads them) are `values`.
    mutating func offer(_ element: Element, values: [PropertyValue], primaryKey: UUID) {
        let entry = Entry(element: element, key: SortKey(values: values, primaryKey: primaryKey))
        guard let capacity else { return entries.append(entry) }
        guard capacity > 0 else { return }
        if entries.count < capacity {
            entries.append(entry)
            siftUp(entries.count - 1)
        } else if precedes(entry, entries[0]) {
            entries[0] = entry
            siftDown(0)
        }
    }

    /// The window, in order.
    func window() -> [Element] {
        // The entries' positions are sorted by their keys, not the entries: neither a move nor
        // a comparison copies a match (a record's bytes, its key and its values).
        let keys = entries.map(\.key)
        let ordered = keys.indices.sorted { precedes(keys[$0], keys[$1]) }
        let start = min(offset, ordered.count)
        let end = limit.map { start + min($0, ordered.count - start) } ?? ordered.count
        return ordered[start..<end].map { entries[$0].element }
    }

    private func precedes(_ a: Entry, _ b: Entry) -> Bool { precedes(a.key, b.key) }

    private func precedes(_ a: SortKey, _ b: SortKey) -> Bool {
        let c = a.compare(b, descriptors)
        return c != 0 ? c < 0 : a.primaryKey.ordering(comparedTo: b.primaryKey) < 0
    }

    private mutating func siftUp(_ start: Int) {
        var i = start
        while i > 0 {
            let parent = (i - 1) / 2
            guard precedes(entries[parent], entries[i]) else { return }
            entries.swapAt(parent, i)
            i = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var i = start
        while true {
            var largest = i
            for child in [2 * i + 1, 2 * i + 2] where child < entries.count && precedes(entries[largest], entries[child]) {
                largest = child
            }
            guard largest != i else { return }
            entries.swapAt(largest, i)
            i = largest
        }
    }
}

/// A match's sort values, with the order-preserving encoding of each value whose encoding
/// orders exactly as ``PredicateEvaluator``'s comparator does (null, Booleans, strings — the
/// byte order of their NFC forms —, dates other than NaN, UUIDs): those compare as bytes; the
/// others (numbers, whose kinds the encoding keeps apart and whose equal values it may tell
/// apart, and every other kind) with the comparator.
struct SortKey {
    let values: [PropertyValue]
    let encoded: [[UInt8]?]
    let primaryKey: UUID

    init(values: [PropertyValue], primaryKey: UUID) {
        self.values = values
        self.encoded = values.map(Self.orderedEncoding)
        self.primaryKey = primaryKey
    }

    static func orderedEncoding(_ value: PropertyValue) -> [UInt8]? {
        switch value {
        case .null, .bool, .string, .uuid: return OrderedValueEncoding.encoded([value])
        case .date(let d) where !d.timeIntervalSinceReferenceDate.isNaN: return OrderedValueEncoding.encoded([value])
        default: return nil
        }
    }

    /// -1, 0 or 1 as this key sorts before, with or after `other` under `descriptors` (the
    /// primary keys not consulted), exactly as ``PredicateEvaluator/compareKeys(_:_:_:)``.
    func compare(_ other: SortKey, _ descriptors: [FetchSortDescriptor]) -> Int {
        for (i, descriptor) in descriptors.enumerated() {
            var c: Int
            // Bytes of one kind, or a null against anything (nulls sort first either way).
            if let x = encoded[i], let y = other.encoded[i], let a = x.first, let b = y.first,
                a == b || a == OrderedValueEncoding.nullTag || b == OrderedValueEncoding.nullTag
            {
                c = x.lexicographicallyPrecedes(y) ? -1 : (x == y ? 0 : 1)
            } else {
                c = PredicateEvaluator.compareKey(values[i], other.values[i])
            }
            if descriptor.order == .reverse { c = -c }
            if c != 0 { return c }
        }
        return 0
    }
}
