extension ResultsObservation {
    /// The newest answer the store holds for this observation, as the next value would return
    /// it (a test hook: `nil` once the observation ended).
    package var newestAnswer: [DefaultSnapshot]? { latest() }
}
