/// A batch as a list of plain operations, and back: what a save spread over several stores
/// keeps in a prepared record until it is committed (FORMAT.md, "Records (the Snapshot
/// layer)", transaction records).
extension WriteBatch {
    /// One operation of a batch, with its bytes.
    package enum Entry: Sendable, Equatable {
        /// ``WriteBatch/put(_:_:)``.
        case put(key: [UInt8], value: [UInt8])
        /// ``WriteBatch/putExternal(_:_:)`` of bytes.
        case putExternal(key: [UInt8], value: [UInt8])
        /// ``WriteBatch/delete(_:)``.
        case delete(key: [UInt8])
    }

    /// The batch's operations in order, or `nil` when one of them cannot be listed as bytes (a
    /// blob copied from a file, or one already written).
    package var entries: [Entry]? {
        var result: [Entry] = []
        result.reserveCapacity(operations.count)
        for operation in operations {
            switch operation {
            case .put(let key, let value): result.append(.put(key: key, value: value))
            case .delete(let key): result.append(.delete(key: key))
            case .putBlob(let key, .bytes(let value)): result.append(.putExternal(key: key, value: value))
            case .putBlob(_, .file), .blob: return nil
            }
        }
        return result
    }

    /// The batch of `entries`, in order.
    package init(entries: [Entry]) {
        self.init()
        for entry in entries {
            switch entry {
            case .put(let key, let value): put(key, value)
            case .putExternal(let key, let value): putExternal(key, value)
            case .delete(let key): delete(key)
            }
        }
    }
}
