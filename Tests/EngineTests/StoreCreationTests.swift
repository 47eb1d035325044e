import Engine
import EngineTestSupport
import Testing

/// `Options.creation`: open makes a store only where the caller means it to, and never turns a
/// folder of other files into one by accident.
@Suite struct StoreCreationTests {
    let fs = FaultInjectingFileSystem()

    func options(_ creation: LogStore.Creation) -> LogStore.Options {
        var options = LogStore.Options()
        options.creation = creation
        return options
    }

    func plant(_ path: String, _ text: String) throws {
        _ = try fs.createDirectory(String(path[..<path.lastIndex(of: "/")!]))
        let file = try fs.openFile(path, create: true)
        try file.write(bytes(text), at: 0)
    }

    @Test func aFolderOfOtherFilesIsNotTurnedIntoAStore() throws {
        try plant("/photos/holiday.jpg", "jpeg bytes")
        try plant("/photos/notes.txt", "notes")
        let error = #expect(throws: EngineError.self) {
            try LogStore.open(at: "/photos", options: LogStore.Options(), fileSystem: fs)
        }
        #expect(error?.code == .notAStore)
        #expect(error?.path == "/photos/holiday.jpg")
        #expect(fs.names(in: "/photos").sorted() == ["holiday.jpg", "notes.txt"], "nothing was created")
        #expect(fs.contents(of: "/photos/holiday.jpg") == bytes("jpeg bytes"))
    }

    @Test func evenAmongOtherFilesMakesAStoreAndLeavesThemAlone() throws {
        try plant("/shared/readme.txt", "keep me")
        let store = try LogStore.open(at: "/shared", options: options(.evenAmongOtherFiles), fileSystem: fs)
        try store.write { $0.put(bytes("k"), bytes("v")) }
        try store.close()
        // Once it holds a store, the default opens it.
        let reopened = try LogStore.open(at: "/shared", options: LogStore.Options(), fileSystem: fs)
        #expect(try reopened.value(forKey: bytes("k")) == bytes("v"))
        #expect(fs.contents(of: "/shared/readme.txt") == bytes("keep me"))
    }

    @Test func aMissingOrEmptyDirectoryBecomesAStoreByDefault() throws {
        _ = try LogStore.open(at: "/new", options: LogStore.Options(), fileSystem: fs)
        _ = try fs.createDirectory("/empty")
        _ = try LogStore.open(at: "/empty", options: LogStore.Options(), fileSystem: fs)
        #expect(fs.names(in: "/new").contains("0000000000000001.wal"))
        #expect(fs.names(in: "/empty").contains("0000000000000001.wal"))
    }

    @Test func neverCreatesOnlyOpens() throws {
        let error = #expect(throws: EngineError.self) {
            try LogStore.open(at: "/absent", options: options(.never), fileSystem: fs)
        }
        #expect(error?.code == .notFound)
        #expect(fs.names(in: "/absent").isEmpty, "nothing was created")
        try LogStore.open(at: "/present", options: LogStore.Options(), fileSystem: fs).close()
        try LogStore.open(at: "/present", options: options(.never), fileSystem: fs).close()
    }

    @Test func alwaysRefusesAnExistingStore() throws {
        try LogStore.open(at: "/fresh", options: options(.always), fileSystem: fs).close()
        let error = #expect(throws: EngineError.self) {
            try LogStore.open(at: "/fresh", options: options(.always), fileSystem: fs)
        }
        #expect(error?.code == .invalidArgument)
    }
}
