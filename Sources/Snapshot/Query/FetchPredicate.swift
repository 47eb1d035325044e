/// A condition on objects, as a tree a store can inspect, plan and evaluate.
///
/// Build one with the operators and methods of ``PredicateOperand``
/// (`.attribute("title").contains("swift", options: .caseInsensitive) && .attribute("date") > day`)
/// or with the cases directly. Predicates are values: `Sendable`, `Hashable` and `Codable`.
///
/// What each case means (nulls, comparisons across number types, string options, paths) is
/// specified by ``PredicateEvaluator``, which every store of this package follows.
public indirect enum FetchPredicate: Hashable, Codable, Sendable {
    /// How a value is compared with a constant.
    public enum Comparison: String, Hashable, Codable, Sendable {
        /// `==`
        case equal
        /// `!=`
        case notEqual
        /// `<`
        case less
        /// `<=`
        case lessOrEqual
        /// `>`
        case greater
        /// `>=`
        case greaterOrEqual
    }

    /// Which part of a string must match.
    public enum StringOperation: String, Hashable, Codable, Sendable {
        /// The needle occurs anywhere.
        case contains
        /// The string starts with the needle.
        case beginsWith
        /// The string ends with the needle.
        case endsWith
    }

    /// How strings are matched: exactly (by `Character`, so canonically equivalent strings
    /// match), or folded as Foundation's `folding(options:locale:)` folds them.
    public struct StringOptions: OptionSet, Hashable, Codable, Sendable {
        public let rawValue: UInt8
        /// An option set from its raw bits.
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// `A` matches `a`.
        public static let caseInsensitive = StringOptions(rawValue: 1 << 0)
        /// `é` matches `e`.
        public static let diacriticInsensitive = StringOptions(rawValue: 1 << 1)
    }

    /// Always `true` or always `false`.
    case constant(Bool)
    /// The value at `path` compared with `value`.
    case compare(path: PropertyPath, Comparison, value: PropertyValue)
    /// The string at `path` matched against `needle`.
    case string(path: PropertyPath, StringOperation, needle: String, options: StringOptions)
    /// The value at `path` is null (or the path crosses a to-one without a target).
    case isNull(path: PropertyPath)
    /// The value at `path` equals one of `values`.
    case oneOf(path: PropertyPath, values: [PropertyValue])
    /// The object's own identifier is one of `identifiers` (the fetch SwiftData makes to
    /// resolve models).
    case identifierIn(Set<PersistentIdentifier>)
    /// Every one holds (`true` when empty).
    case and([FetchPredicate])
    /// At least one holds (`false` when empty).
    case or([FetchPredicate])
    /// The predicate does not hold.
    case not(FetchPredicate)
    /// At least one object reached through the to-many `path` satisfies the predicate
    /// (evaluated on that object).
    case any(path: PropertyPath, FetchPredicate)
    /// Every object reached through the to-many `path` satisfies the predicate (`true` when
    /// there is none).
    case all(path: PropertyPath, FetchPredicate)
    /// The object's concrete entity is `name` or, with `includesSubentities`, one of its
    /// sub-entities (Core Data's `entity ==` and `isKindOfClass`; Swift's `is` and `as?` on a
    /// model of a class hierarchy). Inside an `and`, the conjuncts after it may read the
    /// properties `name` declares (`.isKind(of: "Photo") && .attribute("width") > 1000` on a
    /// fetch of a superentity), as in a conditional cast.
    case entity(String, includesSubentities: Bool)
}
