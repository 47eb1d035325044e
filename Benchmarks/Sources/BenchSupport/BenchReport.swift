import Foundation

/// Every figure of a run, for `--json`.
public struct BenchReport: Codable, Sendable {
    /// Which bench wrote it.
    public var tool: String
    /// When the run started (ISO 8601).
    public var started: String
    /// Wall-clock seconds of the whole run (data generation and set-up included).
    public var totalSeconds: Double
    public var machine: MachineInfo
    /// N.
    public var records: Int
    /// Records of the single-record-commit workloads.
    public var syncRecords: Int
    public var repetitions: Int
    public var scale: Double
    public var quick: Bool
    /// Key plus value bytes of the data set.
    public var rawBytes: Int
    public var keyBytes: Int
    public var valueBytesMinimum: Int
    public var valueBytesMean: Double
    public var valueBytesMaximum: Int
    /// The sizes of `assets`, `compact` and `open-hints` (whether they ran or not).
    public var sizes: WorkloadSizes
    /// The versions of the libraries measured, by contender.
    public var versions: [String: String]
    public var rows: [ResultRow]
    /// The notes printed under the table.
    public var notes: [String]
    /// The goals judged on the run.
    public var goals: [Goal]

    /// Writes the report as pretty-printed JSON to `path`.
    public func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(self)
        do {
            try data.write(to: URL(fileURLWithPath: path))
        } catch {
            throw BenchError("cannot write \(path): \(error.localizedDescription)")
        }
    }
}
