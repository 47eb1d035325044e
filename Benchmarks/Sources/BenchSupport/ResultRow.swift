/// One row of the table: a workload (or one part of it) on a contender, every repetition and the
/// median.
public struct ResultRow: Sendable, Codable {
    public var workload: Workload
    /// The part of the workload the row measures (``Measurement/part``); nil for most workloads.
    public var part: String?
    public var contender: String
    /// Every repetition, in the order run.
    public var samples: [Sample]
    /// The repetition with the median time; the row's figures are all taken from it.
    public var median: Sample
    /// For the subject's rows: its operations per second divided by each reference's, by
    /// reference name (above 1: the subject is faster).
    public var ratios: [String: Double]
    /// For a ratio against a ``ReferenceGroup``: the member whose row it used (the fastest), by
    /// reference name.
    public var ratioBasis: [String: String]

    public init(workload: Workload, part: String? = nil, contender: String, samples: [Sample]) {
        self.workload = workload
        self.part = part
        self.contender = contender
        self.samples = samples
        self.median = Sample.median(of: samples)
        self.ratios = [:]
        self.ratioBasis = [:]
    }

    /// The workload's name, followed by the part's when there is one: the table's first column.
    public var label: String {
        part.map { "\(workload.rawValue) \($0)" } ?? workload.rawValue
    }
}

extension [ResultRow] {
    /// The row of `contender` on `workload` (on its `part`), if it was run.
    public func row(_ workload: Workload, _ contender: String, part: String? = nil) -> ResultRow? {
        first { $0.workload == workload && $0.part == part && $0.contender == contender }
    }

    /// The fastest (most ops/s) of `members`' rows on `workload` and `part`, if any ran.
    public func fastest(_ workload: Workload, among members: [String], part: String? = nil) -> ResultRow? {
        members.compactMap { row(workload, $0, part: part) }
            .filter { $0.median.operationsPerSecond > 0 }
            .max { $0.median.operationsPerSecond < $1.median.operationsPerSecond }
    }

    /// Fills in the subject's ratio to each reference on the same workload and part; a reference
    /// that is a group is its fastest member there (``ratioBasis`` names it).
    mutating func computeRatios(subject: String, references: [String], groups: [ReferenceGroup] = []) {
        for index in indices where self[index].contender == subject {
            let mine = self[index].median.operationsPerSecond
            let (workload, part) = (self[index].workload, self[index].part)
            for reference in references {
                let other: ResultRow?
                if let group = groups.first(where: { $0.name == reference }) {
                    other = fastest(workload, among: group.members, part: part)
                    if let other { self[index].ratioBasis[reference] = other.contender }
                } else {
                    other = row(workload, reference, part: part)
                }
                guard let other, other.median.operationsPerSecond > 0 else { continue }
                self[index].ratios[reference] = mine / other.median.operationsPerSecond
            }
        }
    }
}
