import Foundation

/// The matches of a fetch, gathered as they are found, and its window (offset and limit) in
/// the order of its sort descriptors, ties broken by record key order (the primary key's) or,
/// for matches offered without one, by the order they were offered in (a stable sort).
///
/// The one implementation of a fetch's order and window: the store's fetch
/// (``FetchRunner``) and the evaluator's (``PredicateEvaluator/run(_:over:)``,
/// ``PredicateEvaluator/sorted(_:by:)``) both go through it. The order is
/// ``PredicateEvaluator/compareKeys(_:_:_:)``'s: nulls first, numbers by numeric value across
/// kinds (NaN last), strings by the byte order of their NFC forms, each descriptor reversible;
/// matches are compared on plain keys (``SortKeys``), not on their values.
///
/// With a sort and a limit, only the first offset + limit matches so far are kept, in a
/// bounded heap (a top-k selection), so a fetch of 50 out of 100,000 matches holds 50 of them,
/// not all; without a limit every match is kept and sorted once at the end.
struct FetchWindow<Element> {
    private var keys: SortKeys
    /// Each slot's match (``SortKeys`` numbers the slots).
    private var elements: [Element] = []
    private let offset: Int
    private let limit: Int?
    /// With a limit: how many matches the window needs (offset + limit).
    private let needed: Int?

    init(sortBy descriptors: [FetchSortDescriptor], offset: Int?, limit: Int?) {
        self.offset = offset ?? 0
        self.limit = limit
        needed = limit.map { Self.window(offset: offset, limit: $0) }
        // Without a sort every match is held: the order is the tie key's alone.
        keys = SortKeys(descriptors, capacity: descriptors.isEmpty ? nil : needed)
    }

    /// offset + limit, or `Int.max` when that does not fit.
    static func window(offset: Int?, limit: Int) -> Int {
        let (sum, overflow) = (offset ?? 0).addingReportingOverflow(limit)
        return overflow ? Int.max : sum
    }

    /// How many matches are held.
    var count: Int { keys.count }

    /// Whether the matches held fill the window (with a limit), so that, when matches arrive in
    /// record key order and there is no sort, no later match can be in it.
    var isFull: Bool { needed.map { keys.count >= $0 } ?? false }

    /// Takes a match whose sort values (one per descriptor, as
    /// ``PredicateEvaluator/value(at:of:)`` reads them) are `values`, ties broken by
    /// `primaryKey`'s order.
    mutating func offer(_ element: Element, values: [PropertyValue], primaryKey: UUID) {
        hold(element, in: keys.offer(values, primaryKey: primaryKey))
    }

    /// Takes a match whose sort values are `values`, ties broken by the order of the offers
    /// (a window's matches are all offered with a primary key or all without).
    mutating func offer(_ element: Element, values: [PropertyValue]) {
        hold(element, in: keys.offer(values, primaryKey: nil))
    }

    private mutating func hold(_ element: Element, in slot: Int?) {
        guard let slot else { return }
        if slot == elements.count { elements.append(element) } else { elements[slot] = element }
    }

    /// The window, in order.
    func window() -> [Element] {
        let ordered = keys.ordered()
        let start = min(offset, ordered.count)
        let end = limit.map { start + min($0, ordered.count - start) } ?? ordered.count
        var window: [Element] = []
        window.reserveCapacity(end - start)
        var i = start
        while i < end {
            window.append(elements[ordered[i]])
            i += 1
        }
        return window
    }
}
