/// A fetch a ``DataStore`` is asked to answer.
public struct DataStoreFetchRequest: Hashable, Sendable {
    /// What to fetch.
    public var descriptor: FetchDescriptor
    /// Who is fetching.
    public var editingState: EditingState

    /// A request for `descriptor`.
    public init(descriptor: FetchDescriptor, editingState: EditingState = EditingState()) {
        self.descriptor = descriptor
        self.editingState = editingState
    }
}
