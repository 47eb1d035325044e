extension Equatable where Self: EntityModel & AnyObject {
    /// Two model objects are equal when they are the same object (as SwiftData's models).
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs === rhs }
}
