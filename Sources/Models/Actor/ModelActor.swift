import Dispatch

/// What runs a ``ModelActor``'s jobs and holds its context, as SwiftData's `ModelExecutor`.
public protocol ModelExecutor: AnyObject, Sendable {
    /// The context the actor's code uses (only from jobs this executor runs).
    var modelContext: ModelContext { get }
}

/// A ``ModelExecutor`` that is the actor's serial executor, as SwiftData's
/// `SerialModelExecutor`.
public protocol SerialModelExecutor: ModelExecutor, SerialExecutor {}

/// An actor of the app's own with a context of its own, as SwiftData's `ModelActor` (which its
/// `@ModelActor` macro conforms to; without macros, declare the executor and make it in the
/// initializer):
///
/// ```swift
/// actor Importer: ModelActor {
///     nonisolated let modelExecutor: any SerialModelExecutor
///     init(modelContainer: StoreContainer) {
///         modelExecutor = DefaultSerialModelExecutor(modelContainer: modelContainer)
///     }
///
///     func importTags(_ names: [String]) throws {
///         for name in names { try modelContext.insert(Tag(name: name)) }
///         try modelContext.save()
///     }
/// }
/// ```
///
/// The actor runs on its executor (``unownedExecutor`` is the executor's): every job of the
/// actor, and so every use of ``modelContext``, runs on that executor's own serial queue, one
/// at a time. Two model actors, the main actor's ``StoreContainer/mainContext`` and
/// ``StoreActor`` never queue behind one another: a job blocked on one does not hold up the
/// others (the stores' locks are shared, each held for one call).
public protocol ModelActor: Actor {
    /// The executor the actor runs on, holding its context. (SwiftData's is `any
    /// ModelExecutor`; this one is serial by type, so ``unownedExecutor`` needs no cast.)
    nonisolated var modelExecutor: any SerialModelExecutor { get }
    /// The container of the actor's context.
    nonisolated var modelContainer: StoreContainer { get }
}

extension ModelActor {
    /// The executor's: the actor's jobs run on ``modelExecutor``.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { modelExecutor.asUnownedSerialExecutor() }

    /// The container of ``modelExecutor``'s context.
    public nonisolated var modelContainer: StoreContainer { modelExecutor.container }

    /// The actor's context: use it only on the actor.
    public var modelContext: ModelContext { modelExecutor.modelContext }
}

extension ModelExecutor {
    /// The container of the context (read without touching the context's state).
    nonisolated var container: StoreContainer { modelContext.storeContext.container }
}

/// A serial executor of its own, on one `DispatchQueue`, holding one context: the executor of
/// a ``ModelActor``, as SwiftData's `DefaultSerialModelExecutor`.
///
/// Jobs run one at a time, in the order enqueued, always on ``queue``.
///
/// `@unchecked Sendable`: the executor holds a context, which is not `Sendable`. The lock
/// discipline is the queue's: the context is used only by jobs of the actor the executor runs
/// (``ModelActor/modelContext`` is isolated to that actor), and the executor runs those jobs
/// one at a time on ``queue``; the initializer takes the context as `sending`, so no one else
/// holds it.
public final class DefaultSerialModelExecutor: SerialModelExecutor, @unchecked Sendable {
    /// The context the actor uses.
    public let modelContext: ModelContext
    /// The serial queue every job runs on.
    public var queue: DispatchQueue { jobs.queue }
    private let jobs: ExecutorQueue

    /// An executor on a new serial queue labelled `label`, holding `modelContext`.
    public init(modelContext: sending ModelContext, label: String = "WALStore.ModelActor") {
        self.modelContext = modelContext
        jobs = ExecutorQueue(label: label)
    }

    /// An executor on a new serial queue, holding a new context over `modelContainer`.
    public convenience init(modelContainer: StoreContainer, label: String = "WALStore.ModelActor") {
        self.init(modelContext: ModelContext(modelContainer), label: label)
    }

    /// Runs `job` on ``queue``, after every job enqueued before it.
    public func enqueue(_ job: consuming ExecutorJob) { jobs.run(job, on: asUnownedSerialExecutor()) }

    /// This executor, unowned.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Whether the calling code runs on ``queue``.
    public var isCurrentQueue: Bool { jobs.isCurrent }

    /// Stops the process unless the calling code runs on ``queue``.
    public func checkIsolated() { jobs.checkIsolated() }
}
