import Snapshot

/// A unit of work over a ``StoreContainer`` in typed models, as SwiftData's `ModelContext`:
/// insert model objects, fetch them with a `FetchDescriptor<Model>`, change their properties,
/// delete them, save.
///
/// It wraps a ``StoreContext`` (``storeContext``, the same unit of work at the level of
/// snapshots) and keeps one model object per identifier, so relationships between the objects
/// it returns are references to the same instances.
///
/// **Changes are found by comparison.** Without macros a model cannot report its own changes,
/// so before every fetch, delete and save (and in ``processPendingChanges()``) the context
/// compares each registered class object with the values it last knew and stages the
/// properties that differ; model objects newly reached through a registered object's
/// relationships are inserted. A struct model is a copy: write it back with ``update(_:)``.
///
/// **Relationships** are held as model references (a class's `var post: Post?`, `var tags:
/// [Tag]`) or as identifiers (`PersistentIdentifier?`, `[PersistentIdentifier]`), as each
/// model declares. Making an object makes every object its references reach (there are no
/// faults), reading them from the stores one fetch per entity and level. When both sides of a
/// relationship are model references, the context keeps the other side in step in memory, as
/// SwiftData does (`attachment.post = post` puts the attachment in `post.attachments` and takes
/// it out of its former post's; appending a tag to `post.tags` adds the post to `tag.posts`).
/// After a save or delete, registered objects take the values the stores and delete rules gave
/// them (nullified references, cascaded objects gone), and a class object inserted under a
/// temporary identifier gets its permanent one.
///
/// **Isolation**, as SwiftData's: a context is not `Sendable` and belongs to the isolation
/// domain that made it, where every call is synchronous — the pattern of a Core Data context
/// used only inside its own `perform`. Three places serve:
/// - the main actor: ``StoreContainer/mainContext``, for the code that drives the UI;
/// - an actor of the app's own: a ``ModelActor``, whose ``ModelActor/modelContext`` runs on
///   that actor's own serial executor (``DefaultSerialModelExecutor``), for background work;
/// - ``StoreActor``, the module's global actor, for code that wants one shared queue.
/// Each of these is a serial queue of its own, so a context's work never waits behind another
/// context's work (only the stores' own locks are shared, each held for one call). Model
/// objects, which are not `Sendable` either, stay in the domain of the context that returned
/// them; only identifiers, snapshots and other `Sendable` values cross.
public final class ModelContext {
    /// The snapshot-level unit of work underneath.
    public let storeContext: StoreContext
    let objects: ModelIdentityMap
    /// The class objects deleted in this context since the last save (cascades included), each
    /// with its values at its deletion: a save refuses a change made to one of them after.
    var deletedObjects: [PersistentIdentifier: DeletedObject] = [:]

    /// A class object deleted in the context, and its values when it was deleted.
    struct DeletedObject {
        let object: any EntityModel
        let values: DefaultSnapshot
    }

    /// A context over `container`, saving as `editingState`.
    public init(_ container: StoreContainer, editingState: EditingState = EditingState()) {
        let context = StoreContext(container, editingState: editingState)
        storeContext = context
        objects = ModelIdentityMap(schema: context.container.schema) { ids in try ids.compactMap { try context.snapshot(for: $0) } }
        objects.owner = self
    }

    /// The container whose stores it reads and saves to.
    public var container: StoreContainer { storeContext.container }

    /// Whether anything is pending: staged changes, or registered objects whose properties
    /// differ from what the context last knew.
    public var hasChanges: Bool {
        if storeContext.hasChanges { return true }
        return objects.registeredObjects.contains { id, object in
            storeContext.registeredSnapshot(for: id).map { !Self.changes(of: object, from: $0).isEmpty } ?? false
        }
    }

    /// The properties of `object` that differ from `current`.
    static func changes<Model: EntityModel>(of object: Model, from current: DefaultSnapshot) -> [String: PropertyValue] {
        object.changedValues(from: current)
    }
}
