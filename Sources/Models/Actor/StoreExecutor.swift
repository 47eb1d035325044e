import Dispatch

/// A serial executor that runs every job on one `DispatchQueue` of its own (SE-0392): the
/// executor of ``StoreActor``.
///
/// Jobs run one at a time, in the order they were enqueued, always on ``queue``: so code
/// isolated to the actor always runs on that queue, never on a cooperative thread of its own
/// choosing. Code already on the queue (a `queue.sync` block, say) is isolated to the actor as
/// well: ``checkIsolated()`` accepts it, so `StoreActor.assumeIsolated` works there.
public final class StoreExecutor: SerialExecutor {
    /// The serial queue every job runs on.
    public var queue: DispatchQueue { jobs.queue }
    private let jobs: ExecutorQueue

    /// An executor on a new serial queue labelled `label`.
    public init(label: String) { jobs = ExecutorQueue(label: label) }

    /// Runs `job` on ``queue``, after every job enqueued before it.
    public func enqueue(_ job: consuming ExecutorJob) { jobs.run(job, on: asUnownedSerialExecutor()) }

    /// This executor, unowned.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Whether the calling code runs on ``queue``.
    public var isCurrentQueue: Bool { jobs.isCurrent }

    /// Stops the process unless the calling code runs on ``queue`` (what the runtime asks when
    /// an isolation check finds no actor job running: code on the queue is isolated).
    public func checkIsolated() { jobs.checkIsolated() }
}

/// The serial queue of an executor of this module (``StoreExecutor``,
/// ``DefaultSerialModelExecutor``): it runs the jobs enqueued one at a time, in order, and tags
/// itself so that code can tell it runs there.
struct ExecutorQueue: Sendable {
    /// The serial queue.
    let queue: DispatchQueue

    /// A new serial queue labelled `label`, tagged as itself.
    init(label: String) {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: Self.key, value: Tag(queue: ObjectIdentifier(queue)))
    }

    /// Runs `job` on the queue, as `executor`, after every job enqueued before it.
    func run(_ job: consuming ExecutorJob, on executor: UnownedSerialExecutor) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: executor) }
    }

    /// Whether the calling code runs on the queue.
    var isCurrent: Bool { DispatchQueue.getSpecific(key: Self.key)?.queue == ObjectIdentifier(queue) }

    /// Stops the process unless the calling code runs on the queue.
    func checkIsolated() { dispatchPrecondition(condition: .onQueue(queue)) }

    /// The value a queue is tagged with.
    private struct Tag {
        let queue: ObjectIdentifier
    }
    private static let key = DispatchSpecificKey<Tag>()
}
