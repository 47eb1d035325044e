import Foundation

/// The total order of values, and the equality and hashing that agree with it.
///
/// Values order first by **group**, in this order: ``PropertyValue/null``, a to-one without a
/// target (`.toOne(nil)`), Booleans, numbers, strings, dates, UUIDs, URLs, data, arrays, encoded
/// Codable values, to-one identifiers, to-many identifier lists. So **nulls sort before every
/// other value** (ascending), as in Core Data's SQLite store.
///
/// Within a group:
/// - Booleans: `false < true`.
/// - Numbers (every integer width, `Float`, `Double`, `Decimal`) by numeric value, exactly across
///   integer widths and between integers and binary floating point (`Int64.max` and
///   `Double(Int64.max)` are told apart); a `Decimal` against another kind compares with the
///   other converted to `Decimal`. NaN sorts after every number. Values of equal numeric value
///   are then ordered by case (`int, int8, int16, int32, int64, uint, …, uint64, float, double,
///   decimal`), then for floating point by sign (`-0.0 < 0.0`) and bit pattern.
/// - Strings by ``CanonicalStringOrder``: the byte order of their UTF-8 NFC forms, so
///   canonically equivalent spellings (`"e\u{301}"`, `"\u{e9}"`) are equal, and the order is
///   total and independent of locale.
/// - Dates by their time interval, as doubles above.
/// - UUIDs by their bytes; URLs by `absoluteString`, as strings; data by bytes,
///   lexicographically.
/// - Arrays and to-many lists lexicographically by this order; Codable values by type name (as
///   strings), then bytes; identifiers by ``PersistentIdentifier``'s order.
///
/// Two values compare equal in this order exactly when they are `==`.
extension PropertyValue: Hashable, Comparable {
    public static func == (lhs: PropertyValue, rhs: PropertyValue) -> Bool {
        totalOrder(lhs, rhs) == 0
    }

    public static func < (lhs: PropertyValue, rhs: PropertyValue) -> Bool {
        totalOrder(lhs, rhs) < 0
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(caseName)
        switch self {
        case .null, .toOne(nil): break
        case .bool(let v): hasher.combine(v)
        case .int(let v): hasher.combine(v)
        case .int8(let v): hasher.combine(v)
        case .int16(let v): hasher.combine(v)
        case .int32(let v): hasher.combine(v)
        case .int64(let v): hasher.combine(v)
        case .uint(let v): hasher.combine(v)
        case .uint8(let v): hasher.combine(v)
        case .uint16(let v): hasher.combine(v)
        case .uint32(let v): hasher.combine(v)
        case .uint64(let v): hasher.combine(v)
        case .float(let v): hasher.combine(v.bitPattern)
        case .double(let v): hasher.combine(v.bitPattern)
        case .string(let v): hasher.combine(v)
        case .date(let v): hasher.combine(v.timeIntervalSinceReferenceDate.bitPattern)
        case .uuid(let v): hasher.combine(v)
        case .url(let v): hasher.combine(v.absoluteString)
        case .data(let v): hasher.combine(v)
        case .decimal(let v): if v.isNaN { hasher.combine("NaN") } else { hasher.combine(v) }
        case .array(let v): hasher.combine(v)
        case let .codable(typeName, encoded): hasher.combine(typeName); hasher.combine(encoded)
        case .toOne(let id?): hasher.combine(id)
        case .toMany(let ids): hasher.combine(ids)
        }
    }

    /// -1, 0 or 1 as `lhs` is before, equal to or after `rhs` in the total order.
    static func totalOrder(_ lhs: PropertyValue, _ rhs: PropertyValue) -> Int {
        let (lg, rg) = (lhs.group, rhs.group)
        if lg != rg { return lg < rg ? -1 : 1 }
        switch (lhs, rhs) {
        case (.null, .null), (.toOne(nil), .toOne(nil)): return 0
        case let (.bool(a), .bool(b)): return a == b ? 0 : (!a ? -1 : 1)
        case let (.string(a), .string(b)): return CanonicalStringOrder.compare(a, b)
        case let (.date(a), .date(b)):
            return Number.compareDoubles(a.timeIntervalSinceReferenceDate, b.timeIntervalSinceReferenceDate, detail: true)
        case let (.uuid(a), .uuid(b)): return a.ordering(comparedTo: b)
        case let (.url(a), .url(b)): return CanonicalStringOrder.compare(a.absoluteString, b.absoluteString)
        case let (.data(a), .data(b)): return orderedBytes(a, b)
        case let (.array(a), .array(b)): return lexicographic(a, b, totalOrder)
        case let (.codable(ta, da), .codable(tb, db)):
            let names = CanonicalStringOrder.compare(ta, tb)
            return names != 0 ? names : orderedBytes(da, db)
        case let (.toOne(a?), .toOne(b?)): return ordered(a, b)
        case let (.toMany(a), .toMany(b)): return lexicographic(a, b, ordered)
        default:
            // Both numbers (the only group with several cases).
            guard let a = Number(lhs), let b = Number(rhs) else { return 0 }
            let numeric = Number.compare(a, b)
            if numeric != 0 { return numeric }
            let (lr, rr) = (lhs.numberRank, rhs.numberRank)
            if lr != rr { return lr < rr ? -1 : 1 }
            return Number.compareDetail(a, b)
        }
    }

    /// The value's group in the total order.
    var group: Int {
        switch self {
        case .null: 0
        case .toOne(nil): 1
        case .bool: 2
        case .int, .int8, .int16, .int32, .int64, .uint, .uint8, .uint16, .uint32, .uint64, .float, .double, .decimal: 3
        case .string: 4
        case .date: 5
        case .uuid: 6
        case .url: 7
        case .data: 8
        case .array: 9
        case .codable: 10
        case .toOne: 11
        case .toMany: 12
        }
    }

    private var numberRank: Int {
        switch self {
        case .int: 0
        case .int8: 1
        case .int16: 2
        case .int32: 3
        case .int64: 4
        case .uint: 5
        case .uint8: 6
        case .uint16: 7
        case .uint32: 8
        case .uint64: 9
        case .float: 10
        case .double: 11
        default: 12
        }
    }

    static func ordered<T: Comparable>(_ a: T, _ b: T) -> Int { a == b ? 0 : (a < b ? -1 : 1) }

    /// Lexicographic order of the bytes, by `memcmp` over the common prefix (a byte-by-byte
    /// `Data` iteration costs tens of milliseconds on a 1 MiB attachment, and a save compares
    /// every value it writes).
    static func orderedBytes(_ a: Data, _ b: Data) -> Int {
        let common = min(a.count, b.count)
        let prefix = a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in
                guard common > 0, let x = x.baseAddress, let y = y.baseAddress else { return Int32(0) }
                return memcmp(x, y, common)
            }
        }
        if prefix != 0 { return prefix < 0 ? -1 : 1 }
        return ordered(a.count, b.count)
    }

    static func lexicographic<T>(_ a: [T], _ b: [T], _ compare: (T, T) -> Int) -> Int {
        for (x, y) in zip(a, b) {
            let c = compare(x, y)
            if c != 0 { return c }
        }
        return ordered(a.count, b.count)
    }
}

/// A number of any case, for comparisons across cases.
enum Number {
    /// An integer as sign and magnitude, so every width fits.
    case integer(negative: Bool, magnitude: UInt64)
    case floating(Double)
    case decimal(Decimal)

    init?(_ value: PropertyValue) {
        switch value {
        case .int(let v): self = .init(signed: Int64(v))
        case .int8(let v): self = .init(signed: Int64(v))
        case .int16(let v): self = .init(signed: Int64(v))
        case .int32(let v): self = .init(signed: Int64(v))
        case .int64(let v): self = .init(signed: v)
        case .uint(let v): self = .integer(negative: false, magnitude: UInt64(v))
        case .uint8(let v): self = .integer(negative: false, magnitude: UInt64(v))
        case .uint16(let v): self = .integer(negative: false, magnitude: UInt64(v))
        case .uint32(let v): self = .integer(negative: false, magnitude: UInt64(v))
        case .uint64(let v): self = .integer(negative: false, magnitude: v)
        case .float(let v): self = .floating(Double(v))
        case .double(let v): self = .floating(v)
        case .decimal(let v): self = .decimal(v)
        default: return nil
        }
    }

    init(signed value: Int64) {
        self = .integer(negative: value < 0, magnitude: value.magnitude)
    }

    var isNaN: Bool {
        switch self {
        case .integer: false
        case .floating(let d): d.isNaN
        case .decimal(let d): d.isNaN
        }
    }

    /// Numeric order: -1, 0, 1; NaN after every number and equal to NaN.
    static func compare(_ a: Number, _ b: Number) -> Int {
        switch (a.isNaN, b.isNaN) {
        case (true, true): return 0
        case (true, false): return 1
        case (false, true): return -1
        default: break
        }
        switch (a, b) {
        case let (.integer(an, am), .integer(bn, bm)): return compareIntegers(an, am, bn, bm)
        case let (.floating(x), .floating(y)): return compareDoubles(x, y, detail: false)
        case let (.integer(n, m), .floating(d)): return compareInteger(n, m, withDouble: d)
        case let (.floating(d), .integer(n, m)): return -compareInteger(n, m, withDouble: d)
        default:
            guard let x = a.decimalValue, let y = b.decimalValue else {
                // One side is an infinite double, which Decimal cannot hold.
                let sign: (Number) -> Int = { if case .floating(let d) = $0, d.isInfinite { return d < 0 ? -1 : 1 } else { return 0 } }
                return PropertyValue.ordered(sign(a), sign(b))
            }
            return PropertyValue.ordered(x, y)
        }
    }

    /// The tie-break between numerically equal values of one case: sign, then bits.
    static func compareDetail(_ a: Number, _ b: Number) -> Int {
        if case let .floating(x) = a, case let .floating(y) = b { return compareDoubles(x, y, detail: true) }
        return 0
    }

    private var decimalValue: Decimal? {
        switch self {
        case let .integer(negative, magnitude):
            let d = Decimal(magnitude)
            return negative ? -d : d
        case .floating(let d): return d.isFinite ? Decimal(d) : nil
        case .decimal(let d): return d
        }
    }

    private static func compareIntegers(_ an: Bool, _ am: UInt64, _ bn: Bool, _ bm: UInt64) -> Int {
        if an != bn { return an ? -1 : 1 }
        let c = PropertyValue.ordered(am, bm)
        return an ? -c : c
    }

    /// Integer against a non-NaN double, exactly.
    private static func compareInteger(_ negative: Bool, _ magnitude: UInt64, withDouble d: Double) -> Int {
        if d.isInfinite { return d < 0 ? 1 : -1 }
        let floor = d.rounded(.down)
        if floor < -9_223_372_036_854_775_808.0 { return 1 }  // d < Int64.min <= the integer
        if floor >= 18_446_744_073_709_551_616.0 { return -1 }  // d >= 2^64 > the integer
        let floorNegative = floor < 0
        let floorMagnitude = UInt64(floor.magnitude)
        let c = compareIntegers(negative, magnitude, floorNegative, floorMagnitude)
        if c != 0 { return c }
        return d > floor ? -1 : 0
    }

    /// Doubles in numeric order (NaN last); with `detail`, numerically equal ones (and NaNs) by
    /// sign, then bit pattern, so the result is 0 only for identical bits.
    static func compareDoubles(_ x: Double, _ y: Double, detail: Bool) -> Int {
        switch (x.isNaN, y.isNaN) {
        case (true, false): return 1
        case (false, true): return -1
        case (false, false) where x != y: return x < y ? -1 : 1
        default: break
        }
        guard detail, x.bitPattern != y.bitPattern else { return 0 }
        if x.sign != y.sign { return x.sign == .minus ? -1 : 1 }
        return x.bitPattern < y.bitPattern ? -1 : 1
    }
}
