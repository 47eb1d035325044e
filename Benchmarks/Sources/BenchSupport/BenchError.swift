/// A failure of the harness or of a contender, in words for the user.
public struct BenchError: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
