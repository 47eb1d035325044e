extension Schema {
    /// A schema's version identifier, as SwiftData's `Schema.Version`: three numbers compared
    /// in order, written `major.minor.patch`.
    public struct Version: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
        /// The first number.
        public var major: Int
        /// The second number.
        public var minor: Int
        /// The third number.
        public var patch: Int

        /// The version `major.minor.patch`.
        public init(_ major: Int, _ minor: Int, _ patch: Int) {
            self.major = major
            self.minor = minor
            self.patch = patch
        }

        /// Orders by major, then minor, then patch.
        public static func < (lhs: Version, rhs: Version) -> Bool {
            (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
        }

        /// `major.minor.patch`.
        public var description: String { "\(major).\(minor).\(patch)" }
    }
}
