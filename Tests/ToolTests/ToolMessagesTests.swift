import EngineTestSupport
import Foundation
import Testing

@testable import WALStoreTool

/// What a shell user reads: tool commands and flags, one `walstore COMMAND:` prefix a message,
/// usage errors for what the tool cannot do, and `dump`'s table.
@Suite struct ToolMessagesTests {
    @Test func aFailureNamesTheCommandOnceAndNoSwiftAPI() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let usage = try Tool.run("info")
        #expect(usage.status == 2)
        #expect(usage.error.components(separatedBy: "walstore info:").count == 2, "one prefix: \(usage.error)")
        let verifyLimit = try Tool.run("verify", directory.path, "--limit", "x")
        #expect(verifyLimit.error.components(separatedBy: "walstore verify:").count == 2, "one prefix: \(verifyLimit.error)")

        let other = directory.path + "/other"
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: other + "/notes.txt", contents: Data("x".utf8))
        let foreign = try Tool.run("info", other)
        #expect(foreign.status == 5)
        #expect(!foreign.error.contains(".evenAmongOtherFiles") && !foreign.error.contains("creation"), "\(foreign.error)")

        let empty = directory.path + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let nothing = try Tool.run("info", empty)
        #expect(!nothing.error.contains(".ifMissing") && !nothing.error.contains(".never"), "\(nothing.error)")

        for command in ["compact", "salvage", "stats"] {
            let help = try Tool.run(command, "--help")
            #expect(!help.output.contains("LogStore"), "\(command) --help: \(help.output)")
        }
    }

    @Test func theToolsAdviceOnDamageNamesItsCommands() {
        let message = ToolError.shellWords(
            "a frame's checksum does not match; LogStore.salvage(at:) opens the store with every intact commit and moves the damaged bytes to quarantine/"
        )
        #expect(!message.contains("LogStore") && message.contains("walstore salvage STORE"), "\(message)")
    }

    @Test func dumpRefusesAWhereFieldTheRecordsDoNotHaveAndNamesThoseTheyHave() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/store"
        try ToolModel.makeStore(at: path).close()
        let unknown = try Tool.run("dump", path, "--where", "nosuch=1")
        #expect(unknown.status == 2 && unknown.output.isEmpty)
        #expect(unknown.error.contains("CD_nosuch") && unknown.error.contains("CD_title") && unknown.error.contains("CD_width"), "\(unknown.error)")
        let ofEntity = try Tool.run("dump", path, "--entity", "Tag", "--where", "title=x")
        #expect(ofEntity.status == 2 && ofEntity.error.contains("CD_name") && !ofEntity.error.contains("CD_width"), "\(ofEntity.error)")
        #expect(try Tool.run("dump", path, "--where", "name=swift").jsonLines().count == 1)
        #expect(try Tool.run("dump", path, "--format", "xml").status == 2)
    }

    @Test func dumpPrintsATableARowPerRecord() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/store"
        try ToolModel.makeStore(at: path).close()
        let run = try Tool.run("dump", path, "--entity", "Tag", "--format", "table")
        #expect(run.status == 0)
        let lines = run.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "CD_Tag (2 records)")
        #expect(lines.dropFirst().first?.hasPrefix("recordName") == true && lines[1].contains("entityName") && lines[1].contains("name"))
        #expect(lines.count == 4 && lines.dropFirst(2).allSatisfy { $0.hasPrefix("Tag_") && $0.contains("Tag") })
        #expect(Set(lines.dropFirst(2).map { String($0.split(separator: " ").last ?? "") }) == ["swift", "linux"])
        let all = try Tool.run("dump", path, "--format", "table")
        #expect(all.output.contains("CD_Post (3 records)") && all.output.contains("CDMR (6 records)"))
        #expect(all.output.contains("<asset 70000 bytes>"))
    }
}
