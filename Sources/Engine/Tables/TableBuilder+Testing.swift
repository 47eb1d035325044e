extension TableBuilder {
    /// The metadata bytes the builder holds now, the top-level index's entries aside: the index
    /// partition being built, the key hashes of the filter partition being built, the last
    /// separator, and the partitions' stored bytes not yet taken. At most
    /// ``heldMetadataBound(_:)`` when the caller takes partition bytes after each ``add(_:)``.
    var heldMetadataBytes: Int {
        index.estimatedSize + 8 * filter.count + lastSeparator.count + partitionBytes.count
    }

    /// The bytes of the top-level index's entries held (packed), one per partition cut: the one
    /// part of a table's metadata a builder holds until its end.
    var topLevelEntryBytes: Int { topEntries.bytes.count }
}
