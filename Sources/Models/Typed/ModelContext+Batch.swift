import Foundation
import Snapshot

extension ModelContext {
    /// Stages the deletion of every object of `model` that `predicate` selects (every object of
    /// it when `nil`), as SwiftData's `delete(model:where:includeSubclasses:)`: they are removed
    /// from the stores by the next ``save()``, with what their delete rules imply, in that one
    /// save. Objects of `model`'s sub-entities are included unless `includeSubclasses` is false.
    ///
    /// The objects are found with one fetch of identifiers (pending changes included, so a
    /// matching insert not yet saved is discarded); none is made as a model object, and the
    /// registered ones become deleted objects (``isDeleted(_:)``) as with ``delete(_:)``. The
    /// cost grows with the objects selected, not with the store.
    ///
    /// - Throws: as ``fetchIdentifiers(_:)`` (a predicate the store cannot run is refused before
    ///   any read); as ``delete(_:)`` (`deleteDenied`): the objects staged by this call before
    ///   the refused one stay staged (``rollback()`` discards every pending change).
    public func delete<Model: EntityModel>(model: Model.Type, where predicate: Predicate<Model>? = nil, includeSubclasses: Bool = true) throws {
        let ids = try fetchIdentifiers(FetchDescriptor<Model>(predicate: predicate))
        var staged = false
        do {
            for id in ids where includeSubclasses || id.entityName == Model.entityName {
                // A cascade of one staged earlier may have deleted it already.
                if id.isTemporary ? storeContext.inserts[id] == nil : try storeContext.snapshot(for: id) == nil { continue }
                for deleted in try storeContext.stageDeletion(id) {
                    staged = true
                    guard let object = objects.registeredObject(for: deleted) else { continue }
                    deletedObjects[deleted] = DeletedObject(object: object, values: object.snapshot)
                    (object as? ModelObject)?.isDeleted = true
                }
            }
        } catch {
            if staged { try? refreshRegisteredObjects() }
            throw error
        }
        if staged { try refreshRegisteredObjects() }
    }

    /// Runs `block`, then saves every pending change in one ``save()``, as SwiftData's
    /// `transaction(block:)`. When `block` or the save throws, every pending change of the
    /// context is rolled back (``rollback()``: those made before the call too, so that the
    /// context is left as the stores hold it) and the error is rethrown: nothing is saved.
    public func transaction(block: () throws -> Void) throws {
        do {
            try block()
            _ = try save()
        } catch {
            try? rollback()
            throw error
        }
    }
}
