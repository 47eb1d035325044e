/// The entities a store holds, checked for consistency when made.
///
/// A `Schema` value is always consistent: ``init(_:)`` (and decoding) refuse one whose
/// relationships point at unknown entities, whose inverses do not point back, whose names
/// clash, or whose indexes and constraints name unknown properties — see
/// ``Inconsistency`` for every rule. The lookups (``entity(named:)``, ``rootEntity(of:)``,
/// ``allProperties(of:)``, …) answer for this consistent set.
///
/// Its `Codable` form (the list of entities, as sorted-keys JSON) is what a store's header
/// records (FORMAT.md, "The header"), so that a store opened with another schema can name
/// the differences.
public struct Schema: Hashable, Codable, Sendable {
    /// The entities, in the order given.
    public let entities: [Entity]
    /// The lookups' answers, worked out once when the schema is made (it is immutable).
    let tables: LookupTables

    /// A schema of `entities`.
    ///
    /// - Throws: ``DataStoreError/Code/invalidSchema`` for the first ``Inconsistency`` found
    ///   (``DataStoreError/underlying`` is it; ``DataStoreError/entityName`` and
    ///   ``DataStoreError/propertyName`` name the place).
    public init(_ entities: [Entity]) throws {
        if let first = Schema.inconsistencies(in: entities).first {
            throw DataStoreError(
                .invalidSchema, "The schema is inconsistent: \(first). Fix the declaration it names.",
                entityName: first.entityName, propertyName: first.propertyName, underlying: first)
        }
        self.entities = entities
        self.tables = LookupTables(entities)
    }

    public static func == (lhs: Schema, rhs: Schema) -> Bool { lhs.entities == rhs.entities }
    public func hash(into hasher: inout Hasher) { hasher.combine(entities) }

    private enum CodingKeys: String, CodingKey { case entities }

    /// Decodes the entities and checks them as ``init(_:)`` does.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(try container.decode([Entity].self, forKey: .entities))
    }

    /// Encodes the entities.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(entities, forKey: .entities)
    }
}
