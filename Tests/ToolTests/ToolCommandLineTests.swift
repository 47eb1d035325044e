import Engine
import EngineTestSupport
import Foundation
import Snapshot
import Testing

/// The command line itself: help, usage errors, and paths that are no store.
@Suite struct ToolCommandLineTests {
    static let commands = ["info", "verify", "stats", "compact", "salvage", "dump", "get", "scan", "export", "import"]

    @Test(arguments: commands)
    func everyCommandHasHelpThatShowsItsUsageAndExitCodes(command: String) throws {
        let run = try Tool.run(command, "--help")
        #expect(run.status == 0)
        #expect(run.output.hasPrefix("usage: walstore \(command)"))
        #expect(run.output.contains("exit codes: 0 ok, 1 problems found, 2 usage, 3 locked, 4 corrupt"))
    }

    @Test func withoutACommandItPrintsTheOverviewAndExitsWithUsage() throws {
        let run = try Tool.run()
        #expect(run.status == 2)
        for command in Self.commands { #expect(run.error.contains("  \(command) ")) }
        #expect(try Tool.run("--help").status == 0)
    }

    @Test func anUnknownCommandOrFlagOrAMissingArgumentIsUsage() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let unknown = try Tool.run("frobnicate", directory.path)
        #expect(unknown.status == 2 && unknown.error.contains("unknown command frobnicate"))
        let flag = try Tool.run("info", "--colour", directory.path)
        #expect(flag.status == 2 && flag.error.contains("unknown flag --colour"))
        let missing = try Tool.run("info")
        #expect(missing.status == 2 && missing.error.contains("expected STORE"))
        let noValue = try Tool.run("dump", directory.path, "--entity")
        #expect(noValue.status == 2 && noValue.error.contains("--entity needs a value"))
        let json = try Tool.run("verify", "--json", "--limit", "x", directory.path)
        #expect(json.status == 2)
        let error = try #require(try json.json()["error"] as? [String: Any])
        #expect(error["exitCode"] as? Int == 2 && error["code"] as? String == "usage")
    }

    @Test(arguments: ["info", "verify", "stats", "compact", "salvage", "dump", "scan"])
    func aMissingPathIsNotAStoreAndNothingIsMade(command: String) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/absent"
        let run = try Tool.run(command, path)
        #expect(run.status == 5, "\(run.error)")
        #expect(run.error.contains("there is nothing at"))
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test(arguments: ["info", "verify", "salvage", "compact"])
    func aFileInsteadOfADirectoryIsRefused(command: String) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.path + "/notes.txt"
        _ = FileManager.default.createFile(atPath: file, contents: Data("hello".utf8))
        let run = try Tool.run(command, file)
        #expect(run.status == 5)
        #expect(run.error.contains("is a file, not a store directory"))
        #expect(FileManager.default.contents(atPath: file) == Data("hello".utf8))
    }

    @Test(arguments: ["info", "verify", "salvage", "compact", "dump", "export"])
    func aDirectoryOfOtherFilesIsRefusedWithoutCreatingAnythingInIt(command: String) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        _ = FileManager.default.createFile(atPath: directory.path + "/photo.jpg", contents: Data([1, 2, 3]))
        let before = directoryContents(directory.path)
        var arguments = [command, directory.path]
        if command == "export" { arguments = ["export", "--cloudkit", directory.path + "-export", directory.path] }
        let run = try Tool.run(arguments)
        #expect(run.status == 5, "\(run.status) \(run.error)")
        #expect(directoryContents(directory.path) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["photo.jpg"])
    }

    @Test(arguments: ["info", "verify", "stats", "compact", "salvage", "dump", "scan", "export"])
    func aStoreHeldByARunningProcessIsRefusedAsLocked(command: String) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try ToolModel.makeStore(at: directory.path + "/store")
        defer { try? store.close() }
        var arguments = [command, directory.path + "/store"]
        if command == "export" { arguments = ["export", "--cloudkit", directory.path + "/export", directory.path + "/store"] }
        let run = try Tool.run(arguments)
        #expect(run.status == 3, "\(run.error)")
        #expect(run.error.contains("open in another process"))
    }
}
