/// One measured part of a repetition. Most workloads time one thing (part nil); `assets`,
/// `compact` and `open-hints` time several, each a row of its own in the table.
public struct Measurement: Sendable {
    /// What was timed, as the table shows it after the workload's name (`"1 MiB random write"`);
    /// nil for the workload's only part.
    public var part: String?
    public var sample: Sample

    public init(part: String? = nil, _ sample: Sample) {
        self.part = part
        self.sample = sample
    }
}
