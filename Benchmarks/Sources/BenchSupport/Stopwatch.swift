/// Times a piece of work on the monotonic clock.
public enum Stopwatch {
    /// Runs `body` and returns its result with the seconds it took.
    public static func time<T, Failure: Error>(
        _ body: () throws(Failure) -> T
    ) throws(Failure) -> (result: T, seconds: Double) {
        let clock = ContinuousClock()
        let start = clock.now
        let result = try body()
        return (result, seconds(start.duration(to: clock.now)))
    }

    /// A duration in seconds.
    public static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }
}
