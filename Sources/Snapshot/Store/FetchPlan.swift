import Engine

/// How a fetch reads its candidates: through a declared index (a key range of its entries,
/// possibly a top-k walk in sort order), or by scanning the records of the entity's root.
struct FetchPlan {
    /// The index entries to read, and in which direction.
    var range: LogStore.KeyRange
    var reverse: Bool
    /// For a sort-with-limit walk: the sort key the index orders by, and how many objects the
    /// window needs (offset + limit) before the walk may stop at the next different value.
    var topK: (sort: FetchSortDescriptor, needed: Int)?
    /// The index's key prefix (`I` entity 0x00 name 0x00).
    var prefix: [UInt8] = []

    /// The index plan for `descriptor`, or `nil` to scan: an equality, range or (case- and
    /// diacritic-sensitive) prefix condition among the top-level conjuncts on the first property
    /// of a declared index, else a sort by that property with a limit.
    static func make(for descriptor: FetchDescriptor, layout: RecordLayout) -> FetchPlan? {
        let schema = layout.schema
        let conjuncts: [FetchPredicate]
        switch descriptor.predicate {
        case .and(let list)?: conjuncts = list
        case let p?: conjuncts = [p]
        case nil: conjuncts = []
        }
        let indexes = layout.indexes(of: descriptor.entityName)
        for index in indexes {
            let first = index.properties[0]
            let prefix = RecordKeys.indexPrefix(entity: index.declaredBy, index: RecordKeys.listName(index.properties))
            guard let property = schema.property(named: first, in: descriptor.entityName) else { continue }
            // Every conjunct on the first property narrows the range: their intersection.
            let ranges = conjuncts.compactMap { range(for: $0, on: first, property, prefix: prefix) }
            if var range = ranges.first {
                for other in ranges.dropFirst() { range = intersect(range, other) }
                // Sorted by the same property with a limit: the index walk is in sort order, so
                // it stops once the window is full (a top-k walk inside the range).
                if let limit = descriptor.fetchLimit, let sort = descriptor.sortBy.first, sort.path.components == [first] {
                    return FetchPlan(
                        range: range, reverse: sort.order == .reverse, topK: (sort, (descriptor.fetchOffset ?? 0) + limit),
                        prefix: prefix)
                }
                return FetchPlan(range: range, reverse: false, prefix: prefix)
            }
        }
        if let limit = descriptor.fetchLimit, let sort = descriptor.sortBy.first, sort.path.components.count == 1 {
            for index in indexes where index.properties[0] == sort.path.components[0] {
                let prefix = RecordKeys.indexPrefix(entity: index.declaredBy, index: RecordKeys.listName(index.properties))
                return FetchPlan(
                    range: .prefix(prefix), reverse: sort.order == .reverse, topK: (sort, (descriptor.fetchOffset ?? 0) + limit), prefix: prefix)
            }
        }
        return nil
    }

    /// The keys in both ranges (which have inclusive or unbounded lower ends and exclusive or
    /// unbounded upper ends, as ``range(for:on:_:prefix:)`` makes them).
    private static func intersect(_ a: LogStore.KeyRange, _ b: LogStore.KeyRange) -> LogStore.KeyRange {
        func lowerKey(_ bound: LogStore.KeyRange.Bound) -> [UInt8]? {
            if case .inclusive(let k) = bound { return k }
            if case .exclusive(let k) = bound { return k }
            return nil
        }
        let lower: LogStore.KeyRange.Bound
        switch (lowerKey(a.lower), lowerKey(b.lower)) {
        case let (x?, y?): lower = x.lexicographicallyPrecedes(y) ? b.lower : a.lower
        case (nil, _): lower = b.lower
        case (_, nil): lower = a.lower
        }
        let upper: LogStore.KeyRange.Bound
        switch (lowerKey(a.upper), lowerKey(b.upper)) {
        case let (x?, y?): upper = x.lexicographicallyPrecedes(y) ? a.upper : b.upper
        case (nil, _): upper = b.upper
        case (_, nil): upper = a.upper
        }
        return LogStore.KeyRange(lower: lower, upper: upper)
    }

    private static func range(for predicate: FetchPredicate, on name: String, _ property: Schema.Property, prefix: [UInt8]) -> LogStore.KeyRange? {
        let end = LogStore.KeyRange.prefix(prefix).upper
        func after(_ key: [UInt8]) -> [UInt8] {
            if case .exclusive(let k) = LogStore.KeyRange.prefix(key).upper { return k }
            return key
        }
        switch predicate {
        case let .compare(path, comparison, value) where path.components == [name]:
            guard let bound = bound(value, for: property) else { return nil }
            if bound.isNull && comparison != .equal { return nil }
            // Numeric zero: -0.0 and 0.0 are equal values with two encodings.
            var low = bound, high = bound
            if case .double(let d) = bound, d == 0 { (low, high) = (.double(-0.0), .double(0.0)) }
            let lowKey = prefix + OrderedValueEncoding.encoded([low])
            let highKey = prefix + OrderedValueEncoding.encoded([high])
            let nonNull = prefix + [OrderedValueEncoding.nullTag + 1]
            switch comparison {
            case .equal: return LogStore.KeyRange(lower: .inclusive(lowKey), upper: .exclusive(after(highKey)))
            case .less: return LogStore.KeyRange(lower: .inclusive(nonNull), upper: .exclusive(lowKey))
            case .lessOrEqual: return LogStore.KeyRange(lower: .inclusive(nonNull), upper: .exclusive(after(highKey)))
            case .greater: return LogStore.KeyRange(lower: .inclusive(after(highKey)), upper: end)
            case .greaterOrEqual: return LogStore.KeyRange(lower: .inclusive(lowKey), upper: end)
            case .notEqual: return nil
            }
        case let .string(path, .beginsWith, needle, options) where path.components == [name] && options.isEmpty:
            guard case .attribute(let a) = property, a.valueType == .string else { return nil }
            return .prefix(prefix + OrderedValueEncoding.stringPrefix(needle))
        default:
            return nil
        }
    }

    /// `value` as the index encodes values of `property`, when the encoding orders it exactly
    /// as the predicate compares it; `nil` otherwise (the fetch then scans).
    private static func bound(_ value: PropertyValue, for property: Schema.Property) -> PropertyValue? {
        if value.isNull { return .null }
        switch property {
        case .relationship(let r):
            if !r.isToMany, case .toOne = value { return value }
            return nil
        case .attribute(let a):
            switch (a.valueType, value) {
            case (.int, _), (.int8, _), (.int16, _), (.int32, _), (.int64, _), (.uint, _), (.uint8, _), (.uint16, _), (.uint32, _), (.uint64, _):
                switch value {
                case .int(let v): return .int64(Int64(v))
                case .int8(let v): return .int64(Int64(v))
                case .int16(let v): return .int64(Int64(v))
                case .int32(let v): return .int64(Int64(v))
                case .int64: return value
                case .uint(let v): return .uint64(UInt64(v))
                case .uint8(let v): return .uint64(UInt64(v))
                case .uint16(let v): return .uint64(UInt64(v))
                case .uint32(let v): return .uint64(UInt64(v))
                case .uint64: return value
                default: return nil
                }
            case (.float, .float(let v)), (.double, .float(let v)): return .double(Double(v))
            case (.float, .double(let v)), (.double, .double(let v)): return .double(v)
            case (.date, .date), (.string, .string), (.uuid, .uuid), (.url, .url), (.bool, .bool): return value
            default: return nil
            }
        }
    }
}
