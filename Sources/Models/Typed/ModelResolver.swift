import Snapshot

/// Finds the model object an identifier names: what turns a relationship's identifiers back
/// into model references when a model is made from a snapshot.
///
/// A context implements it with its identity map (one object per identifier, so references
/// between objects, cycles included, resolve to the same instances). Models whose
/// relationships are held as identifiers never call it.
public protocol ModelResolver {
    /// The object of type `type` that `identifier` names.
    ///
    /// - Throws: ``Snapshot/DataStoreError/Code/danglingReference`` when there is none, or the
    ///   error of the fetch that looked for it.
    func model<Destination: EntityModel>(_ type: Destination.Type, for identifier: PersistentIdentifier) throws -> Destination
}

/// A resolver for models whose relationships are identifiers: it refuses every model
/// reference.
public struct IdentifierOnlyResolver: ModelResolver {
    /// A resolver that refuses every model reference.
    public init() {}

    /// Always throws ``Snapshot/DataStoreError/Code/unsupportedFeature``: there is no object
    /// to return.
    public func model<Destination: EntityModel>(_ type: Destination.Type, for identifier: PersistentIdentifier) throws -> Destination {
        throw DataStoreError(
            .unsupportedFeature,
            "\(identifier) is referred to by a relationship held as a model reference; make the model through a context, which resolves references, or hold the relationship as an identifier.",
            entityName: identifier.entityName, identifier: identifier)
    }
}
