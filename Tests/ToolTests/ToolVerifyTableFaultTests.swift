import Engine
import EngineTestSupport
import Foundation
import Testing

/// `walstore verify` finds faults in a table's parts and in the manifest — a sample of the
/// engine's sweep (`TableFaultSweepTests`): each makes it exit 1 naming the damaged file.
@Suite struct ToolVerifyTableFaultTests {
    /// Where a mutation goes, from the table's footer: (the table's bytes) -> offset, or a cut.
    enum Mutation: String, CaseIterable {
        case dataBlock, firstFilterPartition, lastIndexPartition, topLevelIndex, footer, tableCut, manifest
    }

    /// The table footer's handles: the partitions' offset and length, the top-level index's offset.
    static func footer(_ bytes: Data) -> (partitions: Int, partitionsLength: Int, topLevel: Int) {
        let at = bytes.count - 60
        func u64(_ offset: Int) -> Int {
            (0..<8).reduce(0) { $0 | Int(bytes[bytes.startIndex + at + offset + $1]) << (8 * $1) }
        }
        return (u64(16), u64(24), u64(32))
    }

    @Test(arguments: Mutation.allCases)
    func verifyFindsEachKindOfTableAndManifestFault(mutation: Mutation) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = try ToolVerifyTests.store(directory, compacted: true)
        let table = try #require(try ToolVerifyTests.files(path, suffix: ".sst").first)
        let damaged = mutation == .manifest ? path + "/MANIFEST" : table
        var bytes = try #require(FileManager.default.contents(atPath: damaged))
        let (partitions, partitionsLength, topLevel) = Self.footer(bytes)
        let offset: Int? =
            switch mutation {
            case .dataBlock: 5
            case .firstFilterPartition: partitions
            case .lastIndexPartition: partitions + partitionsLength - 1
            case .topLevelIndex: topLevel + 1
            case .footer: bytes.count - 30
            case .manifest: 20
            case .tableCut: nil
            }
        if let offset {
            bytes[bytes.startIndex + offset] ^= 0x10
        } else {
            bytes = bytes.prefix(partitions)
        }
        try bytes.write(to: URL(fileURLWithPath: damaged))
        let (status, report) = try ToolVerifyTests.verify(path)
        #expect(status == 1, "\(mutation): \(report)")
        let files = try #require(report["files"] as? [String: Any])
        let named = (files["damage"] as? [[String: Any]] ?? []).compactMap { $0["file"] as? String }
        #expect(named.contains(String(damaged.dropFirst(path.count + 1))), "\(mutation): \(named)")
    }
}
