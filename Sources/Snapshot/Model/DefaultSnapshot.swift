/// A snapshot holding its values by property name: what the stores of this package read and
/// write.
///
/// A to-one relationship is a ``PropertyValue/toOne(_:)`` (an identifier or `nil`), a to-many
/// one a ``PropertyValue/toMany(_:)``; every attribute one of the other cases. A property absent
/// from ``values`` has no value, as if it held ``PropertyValue/null``; a fetch that asks for
/// some properties only returns snapshots holding just those.
///
/// Two snapshots are equal when their identifiers and values are equal.
public struct DefaultSnapshot: DataStoreSnapshot, Hashable {
    /// The identity of the object these values belong to.
    public var persistentIdentifier: PersistentIdentifier
    /// The values by property name.
    public var values: [String: PropertyValue]

    /// A snapshot of the object `persistentIdentifier` with `values`.
    public init(persistentIdentifier: PersistentIdentifier, values: [String: PropertyValue] = [:]) {
        self.persistentIdentifier = persistentIdentifier
        self.values = values
    }

    /// The value of the property `name`, or `nil` when the snapshot holds none.
    public subscript(name: String) -> PropertyValue? {
        get { values[name] }
        set { values[name] = newValue }
    }

    /// The same values under `persistentIdentifier`, with every to-one and to-many reference
    /// (including those inside arrays) to a key of `remappedIdentifiers` replaced by its value.
    public func copy(
        persistentIdentifier: PersistentIdentifier, remappedIdentifiers: [PersistentIdentifier: PersistentIdentifier]?
    ) -> DefaultSnapshot {
        guard let remapped = remappedIdentifiers, !remapped.isEmpty else {
            return DefaultSnapshot(persistentIdentifier: persistentIdentifier, values: values)
        }
        return DefaultSnapshot(persistentIdentifier: persistentIdentifier, values: values.mapValues { $0.remapping(remapped) })
    }

    /// The identifiers this snapshot's relationships refer to, in property-name order.
    public var referencedIdentifiers: [PersistentIdentifier] {
        values.sorted { $0.key < $1.key }.flatMap { $0.value.referencedIdentifiers }
    }

    /// This snapshot holding only the properties named in `names` (all of them when `names`
    /// is empty, as for a fetch that does not restrict its properties).
    public func keeping(_ names: [String]) -> DefaultSnapshot {
        guard !names.isEmpty else { return self }
        let wanted = Set(names)
        return DefaultSnapshot(persistentIdentifier: persistentIdentifier, values: values.filter { wanted.contains($0.key) })
    }
}
