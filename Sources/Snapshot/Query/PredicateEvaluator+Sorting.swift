extension PredicateEvaluator {
    /// `snapshots` in the order of `descriptors`: by the first key, ties by the next, and
    /// remaining ties in their order in `snapshots` (a stable sort).
    ///
    /// Each key is read as ``value(at:of:)`` reads it (a to-one without a target reads as
    /// null) and compared in ``PropertyValue``'s total order, never failing on mixed kinds:
    /// nulls first, strings by Swift's `String` order. Numbers compare by numeric value alone
    /// (across widths, `Float`, `Double`, `Decimal`; NaN last): `.int16(2)` and `.double(2)`
    /// tie, so the next key decides. `.reverse` reverses a key's order, so nulls come last.
    ///
    /// - Throws: as ``value(at:of:)`` for a path it cannot read.
    public func sorted(_ snapshots: [DefaultSnapshot], by descriptors: [FetchSortDescriptor]) throws -> [DefaultSnapshot] {
        guard !descriptors.isEmpty else { return snapshots }
        let keys = try snapshots.map { snapshot in try descriptors.map { try value(at: $0.path, of: snapshot) } }
        let order = snapshots.indices.sorted { a, b in
            let c = Self.compareKeys(keys[a], keys[b], descriptors)
            return c != 0 ? c < 0 : a < b
        }
        return order.map { snapshots[$0] }
    }

    /// -1, 0 or 1 as `lhs` sorts before, with or after `rhs` under `descriptors`.
    public func compare(_ lhs: DefaultSnapshot, _ rhs: DefaultSnapshot, by descriptors: [FetchSortDescriptor]) throws -> Int {
        Self.compareKeys(
            try descriptors.map { try value(at: $0.path, of: lhs) }, try descriptors.map { try value(at: $0.path, of: rhs) }, descriptors)
    }

    static func compareKeys(_ lhs: [PropertyValue], _ rhs: [PropertyValue], _ descriptors: [FetchSortDescriptor]) -> Int {
        for (i, descriptor) in descriptors.enumerated() {
            var c: Int
            if let a = Number(lhs[i]), let b = Number(rhs[i]) { c = Number.compare(a, b) }
            else { c = PropertyValue.totalOrder(lhs[i], rhs[i]) }
            if descriptor.order == .reverse { c = -c }
            if c != 0 { return c }
        }
        return 0
    }
}
