/// What a ``DataStore`` is made from: a name, the schema it holds, and whatever else the store
/// needs (a location, options), as SwiftData's `DataStoreConfiguration`.
///
/// Configurations are values: two equal configurations describe the same store.
public protocol DataStoreConfiguration: Hashable, Sendable {
    /// The store type this configuration makes.
    associatedtype Store: DataStore where Store.Configuration == Self

    /// The configuration's name (SwiftData's configurations `Local`, `Cloud`, …).
    var name: String { get }
    /// The entities the store holds.
    var schema: Schema? { get }
}
