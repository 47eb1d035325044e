import Engine

/// How a fetch reads its candidates: through a declared index (key ranges of its entries,
/// walked in key order, possibly a top-k walk in sort order), or by scanning the records of the
/// entity's root.
struct FetchPlan {
    /// The index entries to read, disjoint and in ascending key order (a walk in `reverse`
    /// reads them last to first, each backwards).
    var ranges: [LogStore.KeyRange]
    var reverse: Bool
    /// For a sort-with-limit walk: the sort key the index orders by, and how many objects the
    /// window needs (offset + limit) before the walk may stop at the next different value.
    var topK: (sort: FetchSortDescriptor, needed: Int)?
    /// The key prefix the sorted property's encoding follows: the index's (`I` entity 0x00
    /// name 0x00), then the encodings of the properties before it that the predicate fixes.
    var prefix: [UInt8] = []

    /// The index plan for `descriptor`, or `nil` to scan. Among the top-level conjuncts, an
    /// index is usable through equalities on its first *k* properties, then an equality, range,
    /// `oneOf` list or (case- and diacritic-sensitive) prefix condition on property *k* + 1 (or
    /// nothing more, when *k* ≥ 1); or, with no condition on its first property, a sort by it
    /// with a limit. The index whose conditions fix the most properties wins (the first
    /// declared among equals). With a limit and a sort by the property after the equalities,
    /// the walk is in sort order and stops once the window is full.
    static func make(for descriptor: FetchDescriptor, layout: RecordLayout) -> FetchPlan? {
        let schema = layout.schema
        let conjuncts: [FetchPredicate]
        switch descriptor.predicate {
        case .and(let list)?: conjuncts = list
        case let p?: conjuncts = [p]
        case nil: conjuncts = []
        }
        var best: (plan: FetchPlan, score: Int)?
        for index in layout.indexes(of: descriptor.entityName) {
            var prefix = RecordKeys.indexPrefix(entity: index.declaredBy, index: RecordKeys.listName(index.properties))
            // Equalities on the leading properties fix their encodings: a longer key prefix.
            var fixed = 0
            for name in index.properties {
                guard let property = schema.property(named: name, in: descriptor.entityName),
                    let value = conjuncts.lazy.compactMap({ equality($0, on: name, property) }).first
                else { break }
                prefix += OrderedValueEncoding.encoded([value])
                fixed += 1
            }
            var ranges: [LogStore.KeyRange] = fixed > 0 ? [.prefix(prefix)] : []
            var score = fixed
            var sorted: String?
            if fixed < index.properties.count {
                let name = index.properties[fixed]
                sorted = name
                if let property = schema.property(named: name, in: descriptor.entityName) {
                    // Every conjunct on the property narrows the ranges: their intersection.
                    let narrowing = conjuncts.compactMap { self.ranges(for: $0, on: name, property, prefix: prefix) }
                    if var narrowed = narrowing.first {
                        for other in narrowing.dropFirst() {
                            narrowed = narrowed.flatMap { a in other.map { b in intersect(a, b) } }.filter { !isEmpty($0) }
                        }
                        ranges = narrowed.sorted { (boundKey($0.lower) ?? []).lexicographicallyPrecedes(boundKey($1.lower) ?? []) }
                        score += 1
                    }
                }
            }
            var plan = FetchPlan(ranges: ranges, reverse: false, prefix: prefix)
            if let limit = descriptor.fetchLimit, let sort = descriptor.sortBy.first, let sorted, sort.path.components == [sorted] {
                plan.reverse = sort.order == .reverse
                plan.topK = (sort, FetchWindow<Void>.window(offset: descriptor.fetchOffset, limit: limit))
                if score == 0 { plan.ranges = [.prefix(prefix)] }
            } else if score == 0 {
                continue
            }
            if best.map({ score > $0.score }) ?? true { best = (plan, score) }
        }
        return best?.plan
    }

    /// The value an equality conjunct fixes `property` to, when it has one encoding (every
    /// value but a floating-point zero, which has two).
    private static func equality(_ predicate: FetchPredicate, on name: String, _ property: Schema.Property) -> PropertyValue? {
        let value: PropertyValue
        switch predicate {
        case let .compare(path, .equal, v) where path.components == [name]: value = v
        case let .oneOf(path, values) where path.components == [name] && values.count == 1: value = values[0]
        default: return nil
        }
        guard let bound = bound(value, for: property) else { return nil }
        if case .double(let d) = bound, d == 0 { return nil }
        return bound
    }

    /// The key of a bound, lower or upper (nil when unbounded).
    private static func boundKey(_ bound: LogStore.KeyRange.Bound) -> [UInt8]? {
        if case .inclusive(let k) = bound { return k }
        if case .exclusive(let k) = bound { return k }
        return nil
    }

    /// Whether the range (of an inclusive or unbounded lower end and an exclusive or
    /// unbounded upper end) holds no key.
    private static func isEmpty(_ range: LogStore.KeyRange) -> Bool {
        guard let low = boundKey(range.lower), let high = boundKey(range.upper) else { return false }
        return !low.lexicographicallyPrecedes(high)
    }

    /// The keys in both ranges (which have inclusive or unbounded lower ends and exclusive or
    /// unbounded upper ends, as ``range(for:on:_:prefix:)`` makes them).
    private static func intersect(_ a: LogStore.KeyRange, _ b: LogStore.KeyRange) -> LogStore.KeyRange {
        let lower: LogStore.KeyRange.Bound
        switch (boundKey(a.lower), boundKey(b.lower)) {
        case let (x?, y?): lower = x.lexicographicallyPrecedes(y) ? b.lower : a.lower
        case (nil, _): lower = b.lower
        case (_, nil): lower = a.lower
        }
        let upper: LogStore.KeyRange.Bound
        switch (boundKey(a.upper), boundKey(b.upper)) {
        case let (x?, y?): upper = x.lexicographicallyPrecedes(y) ? a.upper : b.upper
        case (nil, _): upper = b.upper
        case (_, nil): upper = a.upper
        }
        return LogStore.KeyRange(lower: lower, upper: upper)
    }

    /// The ranges of the entries (under `prefix`, the property's encoding next) that `predicate`
    /// may hold for, when it is a condition on the property the index can answer: one range, or
    /// one per distinct value of a `oneOf` list (none for an empty list).
    private static func ranges(for predicate: FetchPredicate, on name: String, _ property: Schema.Property, prefix: [UInt8]) -> [LogStore.KeyRange]? {
        guard case let .oneOf(path, values) = predicate, path.components == [name] else {
            return range(for: predicate, on: name, property, prefix: prefix).map { [$0] }
        }
        var ranges: [LogStore.KeyRange] = []
        for value in values {
            guard let range = range(for: .compare(path: path, .equal, value: value), on: name, property, prefix: prefix) else { return nil }
            if !ranges.contains(range) { ranges.append(range) }
        }
        return ranges
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
