@testable import Engine
import EngineTestSupport
import Testing

/// FORMAT.md's version rule for every kind of file: a well-formed (checksummed) file of another
/// format version is `unsupportedFormat` and nothing in the store changes; a file whose magic is
/// not ours is reported as not ours, a damaged magic as corruption.
@Suite struct VersionRuleTests {
    static let dir = "/versions"

    /// A store with every kind of file: a table, a manifest, sealed segments with hints, the
    /// newest segment with its close hint, and a blob.
    static func store() throws -> FaultInjectingFileSystem {
        let fs = FaultInjectingFileSystem()
        var options = LogStore.Options()
        options.segmentSize = 64 << 10
        options.compaction = .manual
        options.writesSegmentHints = false
        let store = try LogStore.open(at: dir, options: options, fileSystem: fs)
        for round in 0..<30 {
            try store.write { batch in
                for index in 0..<10 { batch.put(bytes("a\(round)-\(index)"), [UInt8](repeating: 1, count: 500)) }
            }
        }
        try store.compact()
        for round in 0..<30 {
            try store.write { batch in
                for index in 0..<10 { batch.put(bytes("b\(round)-\(index)"), [UInt8](repeating: 2, count: 500)) }
            }
        }
        try store.write { $0.putExternal(bytes("blob"), [UInt8](repeating: 3, count: 10_000)) }
        store.writePendingSegmentHints()
        try store.close()
        // The close hint of the newest segment.
        options.writesSegmentHints = true
        let again = try LogStore.open(at: dir, options: options, fileSystem: fs)
        try again.close()
        return fs
    }

    /// Every file of the store at `dir` and its blobs, by path.
    static func snapshot(_ fs: FaultInjectingFileSystem, dir: String = dir) -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for directory in [dir, dir + "/blobs"] {
            for name in fs.names(in: directory) {
                if let bytes = fs.contents(of: directory + "/" + name) { files[directory + "/" + name] = bytes }
            }
        }
        return files
    }

    /// Where each kind's header checksum lies: (covered bytes, offset of the crc32); nil range end
    /// means "every byte before the last four".
    static let kinds: [(suffix: String, checksumAt: Int?)] = [
        (".wal", 28), (".walhint", nil), ("MANIFEST", nil), (".blob", 40),
    ]

    static func path(_ fs: FaultInjectingFileSystem, suffix: String) -> String? {
        if suffix == "MANIFEST" { return dir + "/MANIFEST" }
        let directory = suffix == ".blob" ? dir + "/blobs" : dir
        return fs.names(in: directory).sorted().first { $0.hasSuffix(suffix) }.map { directory + "/" + $0 }
    }

    /// `bytes` with its crc32 recomputed, after an edit.
    static func resealed(_ bytes: [UInt8], checksumAt: Int?) -> [UInt8] {
        var bytes = bytes
        let at = checksumAt ?? bytes.count - 4
        let crc = checksum(bytes[0..<at])
        for i in 0..<4 { bytes[at + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
        return bytes
    }

    /// Opens the store and reads every key, returning the first error.
    static func openAndRead(_ fs: FaultInjectingFileSystem) -> EngineError? {
        do throws(EngineError) {
            let store = try LogStore.open(at: dir, options: LogStore.Options(), fileSystem: fs)
            defer { try? store.close() }
            var cursor = try store.scan()
            while let entry = try cursor.next() { _ = try entry.value() }
            return nil
        } catch {
            return error
        }
    }

    @Test func aFileOfAnotherVersionIsRefusedAndNothingChanges() throws {
        let base = try Self.store()
        for kind in Self.kinds {
            let fs = base.clone()
            let path = try #require(Self.path(fs, suffix: kind.suffix), "a \(kind.suffix) file")
            var bytes = try #require(fs.contents(of: path))
            // A version this build does not read: segments and their hints are at 3, the manifest
            // (the store's format) at 4, blobs at 3 or 4.
            bytes[8] = kind.suffix == "MANIFEST" || kind.suffix == ".blob" ? 5 : 4
            fs.setContents(Self.resealed(bytes, checksumAt: kind.checksumAt), of: path)
            let before = Self.snapshot(fs)
            let error = Self.openAndRead(fs)
            #expect(error?.code == .unsupportedFormat, "\(kind.suffix): \(String(describing: error))")
            #expect(error?.path == path, "\(kind.suffix)")
            let unchanged = Self.snapshot(fs) == before
            #expect(unchanged, "\(kind.suffix): the store's files changed")
        }
    }

    /// A manifest with a flag this build does not know (bytes 10..<12, resealed) is refused as
    /// `unsupportedFormat`, as a version would be, and nothing in the store changes.
    @Test(arguments: [(10, 0x01), (11, 0x80)])
    func aManifestWithAnUnknownFlagIsRefusedAndNothingChanges(byte: Int, bit: UInt8) throws {
        let fs = try Self.store()
        let path = Self.dir + "/MANIFEST"
        var bytes = try #require(fs.contents(of: path))
        #expect(bytes[10] == 0 && bytes[11] == 0, "no flag is written")
        bytes[byte] |= bit
        fs.setContents(Self.resealed(bytes, checksumAt: nil), of: path)
        let before = Self.snapshot(fs)
        let error = Self.openAndRead(fs)
        #expect(error?.code == .unsupportedFormat, "\(String(describing: error))")
        #expect(error?.path == path && error?.offset == 10, "\(String(describing: error))")
        #expect(Self.snapshot(fs) == before, "the store's files changed")
    }

    /// A table of a later version (its footer's version field, the footer resealed) is refused the
    /// same way. (A table's footer is checked crc32 first: a foreign file under a table's name,
    /// or a damaged magic, is corruption; TableCorruptionTests covers those.)
    @Test func aTableOfAnotherVersionIsRefusedAndNothingChanges() throws {
        let fs = try Self.store()
        let path = try #require(Self.path(fs, suffix: ".sst"), "a table")
        var bytes = try #require(fs.contents(of: path))
        let footer = bytes.count - TableFormat.footerSize
        bytes[footer + 8] = 6
        let crc = checksum(bytes[footer..<footer + 56])
        for i in 0..<4 { bytes[footer + 56 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
        fs.setContents(bytes, of: path)
        let before = Self.snapshot(fs)
        let error = Self.openAndRead(fs)
        #expect(error?.code == .unsupportedFormat, "\(String(describing: error))")
        #expect(error?.path == path)
        #expect(Self.snapshot(fs) == before, "the store's files changed")
    }

    /// A file that is not one of ours under one of our names is reported as not ours; the same
    /// magic damaged by a flipped bit is corruption (its checksum passes with our magic). Hints,
    /// being derived, are rebuilt either way.
    @Test func aForeignMagicIsNotOursAndADamagedOneIsCorruption() throws {
        let base = try Self.store()
        for kind in Self.kinds {
            for foreign in [true, false] {
                let fs = base.clone()
                let path = try #require(Self.path(fs, suffix: kind.suffix))
                var bytes = try #require(fs.contents(of: path))
                if foreign {
                    // Another program's file under one of our names: nothing of ours in it.
                    bytes = Array(String(repeating: "NOT OURS, some other program's data. ", count: 4).utf8)
                } else {
                    bytes[3] ^= 0x04
                }
                fs.setContents(bytes, of: path)
                let error = Self.openAndRead(fs)
                let label = "\(kind.suffix), \(foreign ? "foreign" : "damaged") magic"
                if kind.suffix == ".walhint" {
                    #expect(error == nil, "\(label): a hint is rebuilt or its segment replayed, \(String(describing: error))")
                } else {
                    #expect(error?.code == (foreign ? .unsupportedFormat : .corruption), "\(label): \(String(describing: error))")
                    #expect(error?.path == path, "\(label)")
                }
            }
        }
    }
}
