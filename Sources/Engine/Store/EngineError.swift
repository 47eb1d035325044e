/// The one error type the engine throws.
///
/// Modelled on swift-nio's `FileSystemError`: an extensible ``Code`` to switch on, a message for
/// people, and — when the failure came from the operating system — the system call and `errno`.
/// When the failure concerns a place in a file (corruption, a short read), ``path`` and ``offset``
/// name it.
public struct EngineError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. New codes may be added; switch with a `default` case.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case locked, corruption, io, invalidArgument, closed, readOnly, unsupportedFormat, missingBlob
            case notFound, notAStore
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// Another opener (in this process or another) holds the store directory's lock.
        public static let locked = Code(.locked)
        /// Bytes on disk failed a checksum or a structural check; ``EngineError/path`` and
        /// ``EngineError/offset`` name where.
        public static let corruption = Code(.corruption)
        /// A system call failed; ``EngineError/errno`` and ``EngineError/systemCall`` say which.
        public static let io = Code(.io)
        /// The caller passed something the engine cannot store (an empty or oversized key, an
        /// oversized value or batch, an option out of range).
        public static let invalidArgument = Code(.invalidArgument)
        /// The store was closed.
        public static let closed = Code(.closed)
        /// The store refuses writes: a sync failed earlier, so the kernel may have dropped dirty
        /// pages and no later write could be trusted. Reads keep working. Reopen to recover.
        public static let readOnly = Code(.readOnly)
        /// A file carries a magic number or format version this build does not read.
        public static let unsupportedFormat = Code(.unsupportedFormat)
        /// A committed value's blob file is not in the store's `blobs/` directory;
        /// ``EngineError/path`` names the file that should be there.
        public static let missingBlob = Code(.missingBlob)
        /// There is no store at the path, and ``LogStore/Options/creation`` said not to make one.
        public static let notFound = Code(.notFound)
        /// The directory holds other files and no store, so open did not turn it into one
        /// (``LogStore/Options/creation``); ``EngineError/path`` names one of the files.
        public static let notAStore = Code(.notAStore)

        public var description: String {
            switch value {
            case .locked: "locked"
            case .corruption: "corruption"
            case .io: "io"
            case .invalidArgument: "invalidArgument"
            case .closed: "closed"
            case .readOnly: "readOnly"
            case .unsupportedFormat: "unsupportedFormat"
            case .missingBlob: "missingBlob"
            case .notFound: "notFound"
            case .notAStore: "notAStore"
            }
        }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What went wrong, in words.
    public var message: String
    /// The file concerned, when known.
    public var path: String?
    /// The byte offset in ``path`` concerned, when known.
    public var offset: UInt64?
    /// The failing system call (`"fdatasync"`, `"pwrite"`, …), for ``Code/io`` and ``Code/locked``.
    public var systemCall: String?
    /// The `errno` the system call returned.
    public var errno: Int32?
    /// The error that caused this one, when it wraps another.
    public var underlying: (any Error & Sendable)?

    public init(
        _ code: Code, _ message: String, path: String? = nil, offset: UInt64? = nil,
        systemCall: String? = nil, errno: Int32? = nil, underlying: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.path = path
        self.offset = offset
        self.systemCall = systemCall
        self.errno = errno
        self.underlying = underlying
    }

    public var description: String {
        var text = "EngineError.\(code): \(message)"
        if let path { text += " [file \(path)" + (offset.map { " at offset \($0)" } ?? "") + "]" }
        if let systemCall { text += " [\(systemCall)" + (errno.map { " errno \($0)" } ?? "") + "]" }
        if let underlying { text += " (caused by \(underlying))" }
        return text
    }
}

extension EngineError {
    /// What every corruption message ends with: what a user can do next.
    package static let salvageAdvice =
        "LogStore.salvage(at:) opens the store with every intact commit and moves the damaged bytes to quarantine/"

    /// What the refusal of a directory of other files ends with: the options that open it.
    package static let otherFilesAdvice = "choose an empty or new directory, or pass creation .evenAmongOtherFiles"

    /// A ``Code/corruption`` error whose message ends with ``salvageAdvice``.
    static func corruption(_ message: String, path: String, offset: UInt64) -> EngineError {
        EngineError(.corruption, message + "; " + salvageAdvice, path: path, offset: offset)
    }
    static func invalid(_ message: String) -> EngineError {
        EngineError(.invalidArgument, message)
    }
}
