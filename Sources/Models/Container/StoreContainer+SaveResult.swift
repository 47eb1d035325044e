import Snapshot

extension StoreContainer {
    /// What a save through a container did, over all the stores it touched.
    public struct SaveResult: Sendable {
        /// Every inserted temporary identifier → its permanent identifier (of its store).
        public var remappedIdentifiers: [PersistentIdentifier: PersistentIdentifier]
        /// Objects the save changed that the request did not hold as they now are, with their
        /// new values (see ``DataStoreSaveChangesResult/snapshotsToReregister``).
        public var snapshotsToReregister: [PersistentIdentifier: DefaultSnapshot]
        /// Each touched store's own result, by configuration name.
        public var storeResults: [String: DataStoreSaveChangesResult<DefaultSnapshot>]

        /// A result merging `storeResults`.
        public init(storeResults: [String: DataStoreSaveChangesResult<DefaultSnapshot>] = [:]) {
            self.storeResults = storeResults
            remappedIdentifiers = [:]
            snapshotsToReregister = [:]
            for result in storeResults.values {
                remappedIdentifiers.merge(result.remappedIdentifiers) { a, _ in a }
                snapshotsToReregister.merge(result.snapshotsToReregister) { a, _ in a }
            }
        }
    }
}
