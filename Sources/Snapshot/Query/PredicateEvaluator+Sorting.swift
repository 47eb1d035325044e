extension PredicateEvaluator {
    /// `snapshots` in the order of `descriptors`: by the first key, ties by the next, and
    /// remaining ties in their order in `snapshots` (a stable sort).
    ///
    /// Each key is read as ``value(at:of:)`` reads it (a to-one without a target reads as
    /// null) and compared in ``PropertyValue``'s total order, never failing on mixed kinds:
    /// nulls first, strings by ``CanonicalStringOrder`` (canonically equivalent spellings tie). Numbers compare by numeric value alone
    /// (across widths, `Float`, `Double`, `Decimal`; NaN last): `.int16(2)` and `.double(2)`
    /// tie, so the next key decides. `.reverse` reverses a key's order, so nulls come last.
    ///
    /// - Throws: as ``value(at:of:)`` for a path it cannot read.
    public func sorted(_ snapshots: [DefaultSnapshot], by descriptors: [FetchSortDescriptor]) throws -> [DefaultSnapshot] {
        guard !descriptors.isEmpty else { return snapshots }
        return try sortedOrder(snapshots, by: descriptors).map { snapshots[$0] }
    }

    /// The positions of `snapshots` in the order ``sorted(_:by:)`` puts them.
    func sortedOrder(_ snapshots: [DefaultSnapshot], by descriptors: [FetchSortDescriptor]) throws -> [Int] {
        guard !descriptors.isEmpty else { return Array(snapshots.indices) }
        let columns = try descriptors.map { descriptor in
            SortColumn(try snapshots.map { try value(at: descriptor.path, of: $0) }, descriptor)
        }
        return snapshots.indices.sorted { a, b in
            for column in columns {
                let c = column.compare(a, b)
                if c != 0 { return c < 0 }
            }
            return a < b
        }
    }

    /// One sort key's values for every snapshot, kept unboxed when they are all of one kind
    /// whose order needs no conversion (dates; strings, as the UTF-8 bytes of their NFC forms,
    /// normalized once per value rather than once per comparison), so that comparisons do not
    /// switch over value kinds. Compares exactly as ``compareKeys(_:_:_:)`` does.
    private struct SortColumn {
        enum Values {
            case dates([Double])
            case strings([[UInt8]])
            case mixed([PropertyValue])
        }
        let values: Values
        let descriptor: FetchSortDescriptor

        init(_ column: [PropertyValue], _ descriptor: FetchSortDescriptor) {
            self.descriptor = descriptor
            var dates: [Double] = []
            var strings: [[UInt8]] = []
            for value in column {
                switch value {
                case .date(let d) where strings.isEmpty: dates.append(d.timeIntervalSinceReferenceDate)
                case .string(let s) where dates.isEmpty: strings.append(CanonicalStringOrder.normalizedUTF8(s))
                default:
                    values = .mixed(column)
                    return
                }
            }
            values = strings.isEmpty ? .dates(dates) : .strings(strings)
        }

        func compare(_ a: Int, _ b: Int) -> Int {
            let c: Int
            switch values {
            case .dates(let d): c = Number.compareDoubles(d[a], d[b], detail: true)
            case .strings(let s): c = s[a].withUnsafeBytes { x in s[b].withUnsafeBytes { CanonicalStringOrder.orderedBytes(x, $0) } }
            case .mixed(let v): c = PredicateEvaluator.compareKey(v[a], v[b])
            }
            return descriptor.order == .reverse ? -c : c
        }
    }

    /// -1, 0 or 1 as `lhs` sorts before, with or after `rhs` under `descriptors`.
    public func compare(_ lhs: DefaultSnapshot, _ rhs: DefaultSnapshot, by descriptors: [FetchSortDescriptor]) throws -> Int {
        Self.compareKeys(
            try descriptors.map { try value(at: $0.path, of: lhs) }, try descriptors.map { try value(at: $0.path, of: rhs) }, descriptors)
    }

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
