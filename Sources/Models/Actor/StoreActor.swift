/// The global actor that isolates the model layer: the context and the code that uses model
/// objects.
///
/// Its executor (``sharedExecutor``, a ``StoreExecutor``) runs every job on one serial queue,
/// so all work on a context isolated to this actor happens on that queue, one job at a time —
/// the pattern of a Core Data context used only inside its own `perform`. Code isolated to the
/// actor (`@StoreActor func …`, `Task { @StoreActor in … }`, ``run(_:)``) calls the context
/// synchronously; code elsewhere must `await`. Only `Sendable` values — identifiers,
/// snapshots, plain values — cross in and out.
///
/// Model objects are not `Sendable` and are not themselves annotated with the actor
/// (Foundation's `#Predicate` and `SortDescriptor` need key paths to nonisolated properties):
/// the compiler keeps a model object in the isolation domain that made it, so objects a
/// context isolated to this actor returns can only be used on this actor.
@globalActor public actor StoreActor {
    /// The actor.
    public static let shared = StoreActor()

    /// The executor every job of the actor runs on.
    public static let sharedExecutor = StoreExecutor(label: "WALStore.StoreActor")

    /// ``sharedExecutor``.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        Self.sharedExecutor.asUnownedSerialExecutor()
    }

    /// Runs `body` on the actor and returns its result.
    public static func run<Result: Sendable>(_ body: @StoreActor () throws -> Result) async rethrows -> Result {
        try await body()
    }
}
