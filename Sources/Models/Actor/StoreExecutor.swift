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
    public let queue: DispatchQueue

    /// An executor on a new serial queue labelled `label`.
    public init(label: String) {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: StoreExecutorQueueKey.key, value: StoreExecutorQueueKey(queue: ObjectIdentifier(queue)))
    }

    /// Runs `job` on ``queue``, after every job enqueued before it.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    /// This executor, unowned.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Whether the calling code runs on ``queue``.
    public var isCurrentQueue: Bool {
        DispatchQueue.getSpecific(key: StoreExecutorQueueKey.key)?.queue == ObjectIdentifier(queue)
    }

    /// Stops the process unless the calling code runs on ``queue`` (what the runtime asks when
    /// an isolation check finds no actor job running: code on the queue is isolated).
    public func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}

/// The value a ``StoreExecutor`` tags its queue with, to tell it is running on it.
struct StoreExecutorQueueKey {
    /// The queue tagged.
    let queue: ObjectIdentifier
    /// The key.
    static let key = DispatchSpecificKey<StoreExecutorQueueKey>()
}
