/// What history keeps of a deleted object, as SwiftData's `HistoryTombstone`: the values of its
/// attributes marked ``Schema/Attribute/Options/preserveValueOnDeletion``, by attribute name
/// (names as the schema had them when the object was deleted).
public struct HistoryTombstone: Hashable, Sendable, Sequence {
    /// The preserved attributes and their values, sorted by name.
    public let values: [(name: String, value: PropertyValue)]

    /// A tombstone of the given values (sorted by name here).
    public init(_ values: [(name: String, value: PropertyValue)]) {
        self.values = values.sorted { $0.name < $1.name }
    }

    /// The preserved value of the attribute `name`; `nil` when it was not preserved.
    public subscript(name: String) -> PropertyValue? { values.first { $0.name == name }?.value }

    /// The (name, value) pairs, sorted by name.
    public func makeIterator() -> IndexingIterator<[(name: String, value: PropertyValue)]> { values.makeIterator() }

    /// Equal when they hold the same names and values.
    public static func == (lhs: HistoryTombstone, rhs: HistoryTombstone) -> Bool {
        lhs.values.count == rhs.values.count && zip(lhs.values, rhs.values).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// Hashes the names and values.
    public func hash(into hasher: inout Hasher) {
        for (name, value) in values {
            hasher.combine(name)
            hasher.combine(value)
        }
    }
}
