/// A value already written as a blob file of a store, as a key of that store references it:
/// what a later batch of the same store can set another key to without writing the bytes
/// again. A save across several stores names, in its prepared record, the blobs its prepare
/// commit wrote, and hands each to its final key when it commits (FORMAT.md, "Records (the
/// Snapshot layer)", transaction records).
package struct StoredBlob: Sendable, Equatable {
    let reference: BlobReference
    /// The value's length in bytes.
    package var length: UInt64 { reference.length }
}

extension LogStore {
    /// The blob that `key`'s current value is, or `nil` when `key` is absent or its value is
    /// kept inline. Answered from the tail's resident index without I/O when it holds the key;
    /// otherwise from the tables (``LogStore/contains(_:)``'s path).
    ///
    /// - Throws: ``EngineError/Code/closed``; ``EngineError/Code/corruption`` for a damaged table block.
    package func storedBlob(forKey key: [UInt8]) throws(EngineError) -> StoredBlob? {
        guard case .blob(let reference) = try currentVersion(of: key) else { return nil }
        return StoredBlob(reference: reference)
    }
}

extension WriteBatch {
    /// Sets `key` to the value of `blob`, a blob of the store this batch is committed to, without
    /// writing its bytes again. The key `blob` was read from must still reference it when the
    /// commit is applied (deleting that key in this same batch hands the blob over): a blob that
    /// no key references is collected.
    package mutating func put(_ key: [UInt8], storedBlob blob: StoredBlob) {
        operations.append(.blob(key: key, reference: blob.reference))
    }
}
