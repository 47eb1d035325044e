extension UUIDv7Generator {
    /// Test hook: a generator of its own reading `milliseconds` (Unix milliseconds) as its clock,
    /// so that a test can freeze the clock or step it back without touching ``shared``.
    package convenience init(milliseconds: @escaping @Sendable () -> UInt64) {
        self.init(clock: milliseconds)
    }
}
