/// The differences between a store's schema and the schema it was opened with: the
/// ``DataStoreError/underlying`` error of a refused migration (``DataStoreError/Code/schemaMismatch``).
public struct SchemaDifference: Error, Sendable, CustomStringConvertible {
    /// Every difference, in the new schema's order.
    public var changes: [SchemaChange]
    /// The ones that were refused.
    public var incompatible: [SchemaChange]

    /// The differences, the refused ones first.
    public var description: String {
        let rest = changes.filter { !incompatible.contains($0) }
        return (incompatible.map { "\($0) (incompatible)" } + rest.map(\.description)).joined(separator: "; ")
    }
}
