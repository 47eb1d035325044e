/// Puts and deletes committed together: after any crash, all of them are present or none.
///
/// Operations apply in the order they were added; a later operation on the same key wins.
public struct WriteBatch: Sendable {
    enum Operation: Sendable {
        case put(key: [UInt8], value: [UInt8])
        case delete(key: [UInt8])

        var key: [UInt8] {
            switch self {
            case .put(let key, _), .delete(let key): key
            }
        }
    }

    private(set) var operations: [Operation] = []

    public init() {}

    /// Sets `key` to `value`. Keys are 1 to 65,535 bytes; values 0 bytes to 256 MiB.
    public mutating func put(_ key: [UInt8], _ value: [UInt8]) {
        operations.append(.put(key: key, value: value))
    }

    /// Removes `key` (a no-op for a key that is not present, but still logged).
    public mutating func delete(_ key: [UInt8]) {
        operations.append(.delete(key: key))
    }

    /// The number of operations.
    public var count: Int { operations.count }
    /// True when the batch holds no operation; committing it writes nothing.
    public var isEmpty: Bool { operations.isEmpty }

    /// Checks every operation against the format's limits before a byte is written.
    func validate() throws(EngineError) {
        var total = 0
        for (index, op) in operations.enumerated() {
            let key = op.key
            guard !key.isEmpty else { throw .invalid("operation \(index): the key is empty") }
            guard key.count <= LogFormat.maxKeyLength else {
                throw .invalid("operation \(index): the key is \(key.count) bytes, over the limit of \(LogFormat.maxKeyLength)")
            }
            total += key.count + 16
            if case .put(_, let value) = op {
                guard value.count <= LogFormat.maxValueLength else {
                    throw .invalid("operation \(index): the value is \(value.count) bytes, over the limit of \(LogFormat.maxValueLength)")
                }
                total += value.count
            }
        }
        // Leave room for block and frame headers inside the frame payload limit.
        let limit = LogFormat.maxFramePayload - (LogFormat.maxFramePayload >> 6)
        guard total <= limit else {
            throw .invalid("the batch encodes to about \(total) bytes, over the limit of \(limit) for one commit")
        }
    }
}
