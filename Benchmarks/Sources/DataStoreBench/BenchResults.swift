import BenchSupport

/// Everything one run measured, as `--json` writes it.
struct BenchResults: Codable {
    var machine: MachineInfo
    var sqliteVersion: String
    var posts: Int
    var tags: Int
    var users: Int
    /// The JSON store's scale (the posts of the capped table).
    var jsonPosts: Int
    var quick: Bool
    /// What each contender was given.
    var setups: [String: String]
    /// The main workloads, for WALStore and the SQLite stores.
    var figures: [StoreFigure]
    /// WALStore and the JSON store at the JSON store's scale.
    var capped: [StoreFigure]
    /// The run's wall-clock time.
    var seconds: Double

    /// WALStore's ratio to `contender` on `workload` (above 1: WALStore better), when both
    /// were measured.
    static func ratio(_ figures: [StoreFigure], _ workload: String, to contender: String) -> Double? {
        guard let wal = figures.first(where: { $0.workload == workload && $0.contender == ContenderKind.wal.rawValue }),
            let other = figures.first(where: { $0.workload == workload && $0.contender == contender }),
            wal.value > 0, other.value > 0
        else { return nil }
        return wal.higherIsBetter ? wal.value / other.value : other.value / wal.value
    }

    /// The workloads of `figures`, in the order first measured.
    static func workloads(_ figures: [StoreFigure]) -> [String] {
        var seen: Set<String> = []
        return figures.map(\.workload).filter { seen.insert($0).inserted }
    }
}
