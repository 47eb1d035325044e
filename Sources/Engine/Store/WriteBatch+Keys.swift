extension WriteBatch {
    /// The same operations, in the same order, with every key passed through `transform`:
    /// how a layer that keeps its keys under a namespace of its own commits a batch built with
    /// its unprefixed keys.
    package func mappingKeys(_ transform: ([UInt8]) -> [UInt8]) -> WriteBatch {
        var mapped = WriteBatch()
        mapped.operations.reserveCapacity(operations.count)
        for operation in operations {
            switch operation {
            case .put(let key, let value): mapped.operations.append(.put(key: transform(key), value: value))
            case .delete(let key): mapped.operations.append(.delete(key: transform(key)))
            case .putBlob(let key, let source): mapped.operations.append(.putBlob(key: transform(key), source: source))
            case .blob(let key, let reference): mapped.operations.append(.blob(key: transform(key), reference: reference))
            }
        }
        return mapped
    }
}
