/// Puts and deletes committed together: after any crash, all of them are present or none.
///
/// Operations apply in the order they were added; a later operation on the same key wins.
public struct WriteBatch: Sendable {
    enum Operation: Sendable {
        case put(key: [UInt8], value: [UInt8])
        case delete(key: [UInt8])
        /// A value to be written as a blob file when the batch is committed.
        case putBlob(key: [UInt8], source: BlobSource)
        /// A blob already written (what a `putBlob` becomes before the batch is encoded).
        case blob(key: [UInt8], reference: BlobReference)

        var key: [UInt8] {
            switch self {
            case .put(let key, _), .delete(let key), .putBlob(let key, _), .blob(let key, _): key
            }
        }
    }

    var operations: [Operation] = []

    public init() {}

    /// Sets `key` to `value`. Keys are 1 to 65,535 bytes. A value longer than
    /// ``LogStore/Options/blobThreshold`` is stored out of line as a blob file (up to 1 TiB); shorter
    /// ones go into the log.
    public mutating func put(_ key: [UInt8], _ value: [UInt8]) {
        operations.append(.put(key: key, value: value))
    }

    /// Sets `key` to `value`, stored as a blob file whatever its size (an attribute marked for
    /// external storage). The file is written and made durable during ``LogStore/commit(_:)``,
    /// before the commit that references it.
    public mutating func putExternal(_ key: [UInt8], _ value: [UInt8]) {
        operations.append(.putBlob(key: key, source: .bytes(value)))
    }

    /// Sets `key` to the contents of the file at `path`, copied into a blob file in 1 MiB chunks
    /// during ``LogStore/commit(_:)`` (never loaded whole). The file must not change until the
    /// commit returns.
    public mutating func putExternal(_ key: [UInt8], contentsOfFile path: String) {
        operations.append(.putBlob(key: key, source: .file(path)))
    }

    /// Removes `key` (a no-op for a key that is not present, but still logged).
    public mutating func delete(_ key: [UInt8]) {
        operations.append(.delete(key: key))
    }

    /// The number of operations.
    public var count: Int { operations.count }
    /// True when the batch holds no operation; committing it writes nothing.
    public var isEmpty: Bool { operations.isEmpty }

    /// Checks every operation against the format's limits before a byte is written. Values
    /// longer than `blobThreshold` will become blobs.
    func validate(blobThreshold: Int) throws(EngineError) {
        var total = 0
        for (index, op) in operations.enumerated() {
            let key = op.key
            guard !key.isEmpty else { throw .invalid("operation \(index): the key is empty") }
            guard key.count <= LogFormat.maxKeyLength else {
                throw .invalid("operation \(index): the key is \(key.count) bytes, over the limit of \(LogFormat.maxKeyLength)")
            }
            total += key.count + 16
            switch op {
            case .put(_, let value) where value.count > blobThreshold, .putBlob(_, .bytes(let value)):
                guard UInt64(value.count) <= LogFormat.maxBlobLength else {
                    throw .invalid("operation \(index): the value is \(value.count) bytes, over the blob limit of \(LogFormat.maxBlobLength)")
                }
                total += LogFormat.blobReferenceSize
            case .put(_, let value):
                total += value.count
            case .putBlob, .blob:
                total += LogFormat.blobReferenceSize
            case .delete:
                break
            }
        }
        // Leave room for block and frame headers inside the frame payload limit.
        let limit = LogFormat.maxFramePayload - (LogFormat.maxFramePayload >> 6)
        guard total <= limit else {
            throw .invalid("the batch encodes to about \(total) bytes, over the limit of \(limit) for one commit")
        }
    }
}
