import Foundation

extension UUID {
    /// -1, 0 or 1 as `self` orders before, with or after `other`: byte by byte, which is the
    /// order of their `uuidString`s (upper-case hex digits at the same places) without formatting
    /// either one.
    func ordering(comparedTo other: UUID) -> Int {
        withUnsafeBytes(of: uuid) { a in
            withUnsafeBytes(of: other.uuid) { b in
                for (x, y) in zip(a, b) where x != y { return x < y ? -1 : 1 }
                return 0
            }
        }
    }
}
