extension PredicateEvaluator {
    /// `snapshots` in the order of `descriptors`: by the first key, ties by the next, and
    /// remaining ties in their order in `snapshots` (a stable sort).
    ///
    /// Each key is read as ``value(at:of:)`` reads it (a to-one without a target reads as
    /// null) and compared in ``PropertyValue``'s total order, never failing on mixed kinds:
    /// nulls first, strings by ``CanonicalStringOrder`` (canonically equivalent spellings tie). Numbers compare by numeric value alone
    /// (across widths, `Float`, `Double`, `Decimal`; NaN last): `.int16(2)` and `.double(2)`
    /// tie, so the next key decides. `.reverse` reverses a key's order, so nulls come last.
    /// The order is ``compareKeys(_:_:_:)``'s, computed by the fetch window every store's fetch
    /// uses (on plain keys rather than on the values).
    ///
    /// - Throws: as ``value(at:of:)`` for a path it cannot read.
    public func sorted(_ snapshots: [DefaultSnapshot], by descriptors: [FetchSortDescriptor]) throws -> [DefaultSnapshot] {
        guard !descriptors.isEmpty else { return snapshots }
        return try window(snapshots, sortBy: descriptors, offset: nil, limit: nil)
    }

    /// `snapshots` sorted as ``sorted(_:by:)`` sorts them, then offset and limited, through
    /// ``FetchWindow`` (a top-k selection with a limit). The sort values of every snapshot are read first.
    func window(_ snapshots: [DefaultSnapshot], sortBy descriptors: [FetchSortDescriptor], offset: Int?, limit: Int?) throws -> [DefaultSnapshot] {
        var window = FetchWindow<DefaultSnapshot>(sortBy: descriptors, offset: offset, limit: limit)
        for snapshot in snapshots {
            window.offer(snapshot, values: try descriptors.map { try value(at: $0.path, of: snapshot) })
        }
        return window.window()
    }

    /// -1, 0 or 1 as `lhs` sorts before, with or after `rhs` under `descriptors`.
    public func compare(_ lhs: DefaultSnapshot, _ rhs: DefaultSnapshot, by descriptors: [FetchSortDescriptor]) throws -> Int {
        Self.compareKeys(
            try descriptors.map { try value(at: $0.path, of: lhs) }, try descriptors.map { try value(at: $0.path, of: rhs) }, descriptors)
    }

    /// -1, 0 or 1 as the sort values `lhs` sort before, with or after `rhs` under `descriptors`
    /// (each reversed as its descriptor says): the definition of a fetch's order, which
    /// ``SortKeys`` computes on plain keys, and the comparison of a descriptor whose values those
    /// keys cannot order.
    static func compareKeys(_ lhs: [PropertyValue], _ rhs: [PropertyValue], _ descriptors: [FetchSortDescriptor]) -> Int {
        for (i, descriptor) in descriptors.enumerated() {
            var c = compareKey(lhs[i], rhs[i])
            if descriptor.order == .reverse { c = -c }
            if c != 0 { return c }
        }
        return 0
    }

    /// One key in forward order: numbers by numeric value alone, anything else in the total order.
    static func compareKey(_ lhs: PropertyValue, _ rhs: PropertyValue) -> Int {
        if let a = Number(lhs), let b = Number(rhs) { return Number.compare(a, b) }
        return PropertyValue.totalOrder(lhs, rhs)
    }
}
