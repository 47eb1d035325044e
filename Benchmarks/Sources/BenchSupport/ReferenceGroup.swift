/// A ratio column that compares the subject with the faster of several contenders on each
/// workload: SQLite's two table layouts, so that every WALStore figure stands beside the better
/// of them, whichever that is for the workload. The table's cell names the member it used.
public struct ReferenceGroup: Sendable {
    /// The reference's name, as listed in ``BenchDescription/references``; no contender has it.
    public var name: String
    /// The contenders it picks from.
    public var members: [String]
    /// A short name per member for the table's cells ("rowid").
    public var labels: [String: String]

    public init(name: String, members: [String], labels: [String: String]) {
        self.name = name
        self.members = members
        self.labels = labels
    }

    /// The member's short name, or its full name when it has none.
    public func label(_ member: String) -> String { labels[member] ?? member }
}
