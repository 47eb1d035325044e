/// Ends one observation when the last sequence or iterator holding it goes away, or when
/// asked: the registry then forgets the observer and what it held.
package final class ObservationHandle: Sendable {
    private let end: @Sendable () -> Void

    package init(_ end: @escaping @Sendable () -> Void) { self.end = end }

    /// Ends the observation now (again: nothing happens).
    func cancel() { end() }

    deinit { end() }
}
