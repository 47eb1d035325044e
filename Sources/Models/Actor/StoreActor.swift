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

    /// Runs `body`, isolated to the actor, from synchronous code that is already on the actor's
    /// queue (a block the queue runs, say), as `MainActor.assumeIsolated` does for the main
    /// queue.
    ///
    /// Stops the process when the caller is neither in a job of the actor nor on its queue:
    /// the check (``StoreExecutor/checkIsolated()``) is what makes running `body` sound.
    public static func assumeIsolated<Result: Sendable>(
        _ body: @StoreActor () throws -> Result, file: StaticString = #fileID, line: UInt = #line
    ) rethrows -> Result {
        typealias Nonisolated = () throws -> Result
        shared.preconditionIsolated("StoreActor.assumeIsolated called off the actor's queue", file: file, line: line)
        // The check above proves the caller is isolated to the actor, so calling `body` as a
        // nonisolated function is what the compiler would do were it able to see that.
        return try withoutActuallyEscaping(body) { isolated in
            try unsafeBitCast(isolated, to: Nonisolated.self)()
        }
    }

    /// Runs `body` on the actor and returns its result.
    public static func run<Result: Sendable>(_ body: @StoreActor () throws -> Result) async rethrows -> Result {
        try await body()
    }
}
