extension WALDataStore {
    /// Test hook: how many times this store counted its records to make its count keys (at
    /// open, for a generation that holds records and no count key).
    package var countingScans: Int { counts.countingScans }
}
