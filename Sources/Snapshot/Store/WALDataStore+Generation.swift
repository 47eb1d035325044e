import Engine

extension WALDataStore {
    /// A migration context's erase: every record key of its own generation, in one commit.
    func eraseGeneration() throws {
        var batch = WriteBatch()
        for entry in try space.scan(.all) { batch.delete(entry.key) }
        try space.commit(batch)
    }
}
