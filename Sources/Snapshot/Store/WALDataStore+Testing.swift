extension WALDataStore {
    /// Runs the sweep of the generations the header does not name to its end on the calling
    /// thread, or waits for the background run that is going (then returns at once): tests call
    /// it to have the sweep done at a known point.
    package func sweepGenerations() { sweep?.run() }
}
