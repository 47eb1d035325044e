import Engine

extension WALDataStore {
    /// A migration context's erase: every record key of its own generation, in one commit.
    func eraseGeneration() throws {
        var batch = WriteBatch()
        var cursor = try space.scan(.all)
        while let entry = try cursor.next() { batch.delete(entry.key) }
        try space.commit(batch)
        counts.removeAll()
    }
}
