import CTableFloor
import Engine
import Foundation
import Testing

/// The C table floor's reader (`Sources/CTableFloor`) against FORMAT.md's worked table examples
/// (version 4 and version 5), byte for byte, and against tables the engine writes (version 5, of
/// several partitions): every entry the same as the engine's scan, every key found by the
/// lookups, the scan's totals right.
@Suite struct CTableFloorTests {
    /// A table file opened by the C reader, removed with it.
    final class Opened {
        let path: String
        let table: OpaquePointer

        init(path: String) throws {
            self.path = path
            var error = [CChar](repeating: 0, count: 512)
            guard let table = ctf_open(path, &error, error.count) else {
                throw Failure("ctf_open(\(path)): " + String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
            self.table = table
        }

        deinit {
            ctf_close(table)
        }

        /// Every entry through the cursor: key, kind, sequence, value bytes.
        func entries() -> [(key: [UInt8], kind: UInt8, sequence: UInt64, value: [UInt8])] {
            let cursor = ctf_cursor_open(table)!
            defer { ctf_cursor_close(cursor) }
            var result: [(key: [UInt8], kind: UInt8, sequence: UInt64, value: [UInt8])] = []
            var entry = ctf_entry()
            while ctf_cursor_next(cursor, &entry) == 1 {
                result.append((
                    Array(UnsafeBufferPointer(start: entry.key, count: Int(entry.key_length))), entry.kind, entry.sequence,
                    Array(UnsafeBufferPointer(start: entry.value, count: Int(entry.value_length)))))
            }
            return result
        }

        /// ctf_get of `key`: kind, sequence and value, or nil when absent.
        func get(_ key: [UInt8]) -> (kind: UInt8, sequence: UInt64, value: [UInt8])? {
            var entry = ctf_entry()
            guard ctf_get(table, key, key.count, &entry) == 1 else { return nil }
            return (entry.kind, entry.sequence, Array(UnsafeBufferPointer(start: entry.value, count: Int(entry.value_length))))
        }

        /// ctf_lookup_all of `keys`: found with a value, and their value bytes.
        func lookupAll(_ keys: [[UInt8]]) -> (found: UInt64, valueBytes: UInt64) {
            let bytes = keys.flatMap { $0 }
            var offsets: [UInt64] = [0]
            for key in keys { offsets.append(offsets.last! + UInt64(key.count)) }
            var valueBytes: UInt64 = 0
            let found = ctf_lookup_all(table, bytes, offsets, keys.count, &valueBytes)
            return (found, valueBytes)
        }

        func scan() -> ctf_scan_totals {
            var totals = ctf_scan_totals()
            ctf_scan(table, &totals)
            return totals
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    static func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ctablefloor-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The bytes of the hex dump between FORMAT.md's `marker` markers (offset, bytes, optional
    /// `#` comment per line; offsets must run on): `table-example` (version 4) or
    /// `table-v5-example` (version 5).
    static func documentedExample(_ marker: String = "table-example") throws -> [UInt8] {
        let formatFile = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("FORMAT.md")
        let text = try String(contentsOf: formatFile, encoding: .utf8)
        let begin = try #require(text.range(of: "<!-- \(marker):begin -->"))
        let end = try #require(text.range(of: "<!-- \(marker):end -->"))
        var result: [UInt8] = []
        for line in text[begin.upperBound..<end.lowerBound].split(separator: "\n") {
            let code = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
            let tokens = code.split(separator: " ")
            guard let first = tokens.first, first.count == 4, let offset = Int(first, radix: 16) else { continue }
            #expect(offset == result.count, "FORMAT.md \(marker) line at offset \(first) does not run on")
            for token in tokens.dropFirst() { result.append(try #require(UInt8(token, radix: 16), "bad hex byte \(token)")) }
        }
        return result
    }

    @Test func readsFormatMDsWorkedExampleAsDocumented() throws {
        let example = try Self.documentedExample()
        #expect(example.count == 135)
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/0000000000000001.sst"
        try Data(example).write(to: URL(fileURLWithPath: path))
        let table = try Opened(path: path)

        #expect(ctf_version(table.table) == 4)
        #expect(ctf_partition_count(table.table) == 0)
        #expect(ctf_block_count(table.table) == 1)
        #expect(ctf_entry_count(table.table) == 3)
        #expect(ctf_file_bytes(table.table) == 135)
        #expect(ctf_inflated_bytes(table.table) == 37)
        #expect(ctf_zlib_block_count(table.table) == 0)
        let entries = table.entries()
        #expect(entries.map(\.key) == [Self.bytes("user/1"), Self.bytes("user/2"), Self.bytes("user/3")])
        #expect(entries.map(\.kind) == [1, 2, 1])
        #expect(entries.map(\.sequence) == [1, 2, 3])
        #expect(entries.map(\.value) == [Self.bytes("Ada"), [], Self.bytes("Lin")])

        // The documented point read of user/2: block 0, a tombstone of sequence 2.
        let tombstone = try #require(table.get(Self.bytes("user/2")))
        #expect(tombstone.kind == 2 && tombstone.sequence == 2 && tombstone.value.isEmpty)
        #expect(table.get(Self.bytes("user/1"))?.value == Self.bytes("Ada"))
        #expect(table.get(Self.bytes("user/3"))?.value == Self.bytes("Lin"))
        for absent in ["user/0", "user/4", "user/", "user/10", "u", "v", "a", "zzz"] {
            #expect(table.get(Self.bytes(absent)) == nil, "\(absent) is not in the table")
        }
        let found = table.lookupAll(["user/1", "user/2", "user/3", "user/4"].map(Self.bytes))
        #expect(found.found == 2 && found.valueBytes == 6)

        let totals = table.scan()
        #expect(totals.entries == 3 && totals.key_bytes == 18 && totals.value_bytes == 6 && totals.sequence_sum == 6)
    }

    @Test func readsFormatMDsVersion5WorkedExampleAsDocumented() throws {
        let example = try Self.documentedExample("table-v5-example")
        #expect(example.count == 266)
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/0000000000000001.sst"
        try Data(example).write(to: URL(fileURLWithPath: path))
        let table = try Opened(path: path)

        #expect(ctf_version(table.table) == 5)
        #expect(ctf_partition_count(table.table) == 2)
        #expect(ctf_block_count(table.table) == 3)
        #expect(ctf_entry_count(table.table) == 3)
        #expect(ctf_file_bytes(table.table) == 266)
        // Data block contents: 0x00..<0x16, 0x1b..<0x2e, 0x33..<0x49.
        #expect(ctf_inflated_bytes(table.table) == 22 + 19 + 22)
        #expect(ctf_zlib_block_count(table.table) == 0)
        let entries = table.entries()
        #expect(entries.map(\.key) == [Self.bytes("user/1"), Self.bytes("user/2"), Self.bytes("user/3")])
        #expect(entries.map(\.kind) == [1, 2, 1])
        #expect(entries.map(\.sequence) == [1, 2, 3])
        #expect(entries.map(\.value) == [Self.bytes("Ada"), [], Self.bytes("Lin")])

        // The documented point read of user/3: partition 1 (separator "v"), block 2, a value of
        // sequence 3, "Lin".
        let lin = try #require(table.get(Self.bytes("user/3")))
        #expect(lin.kind == 1 && lin.sequence == 3 && lin.value == Self.bytes("Lin"))
        // user/1 and user/2 through partition 0 (blocks 0 and 1).
        let ada = try #require(table.get(Self.bytes("user/1")))
        #expect(ada.kind == 1 && ada.sequence == 1 && ada.value == Self.bytes("Ada"))
        let tombstone = try #require(table.get(Self.bytes("user/2")))
        #expect(tombstone.kind == 2 && tombstone.sequence == 2 && tombstone.value.isEmpty)
        // user/0 takes partition 0 and block 0, which does not hold it; keys above "v" stop at
        // the top-level index; the others fall between blocks.
        for absent in ["user/0", "user/4", "user/", "user/10", "user/20", "u", "v", "w", "a", "zzz"] {
            #expect(table.get(Self.bytes(absent)) == nil, "\(absent) is not in the table")
        }
        let found = table.lookupAll(["user/1", "user/2", "user/3", "user/4"].map(Self.bytes))
        #expect(found.found == 2 && found.valueBytes == 6)

        let totals = table.scan()
        #expect(totals.entries == 3 && totals.key_bytes == 18 && totals.value_bytes == 6 && totals.sequence_sum == 6)
    }

    @Test(arguments: ["table-example", "table-v5-example"])
    func refusesTheExampleWithAnyBitFlipped(marker: String) throws {
        let example = try Self.documentedExample(marker)
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/flipped.sst"
        for offset in example.indices {
            for bit in 0..<8 {
                var damaged = example
                damaged[offset] ^= UInt8(1) << bit
                try Data(damaged).write(to: URL(fileURLWithPath: path))
                var error = [CChar](repeating: 0, count: 256)
                let table = ctf_open(path, &error, error.count)
                #expect(table == nil, "\(marker): a flipped bit \(bit) at offset \(offset) was accepted")
                ctf_close(table)
            }
        }
    }

    /// A footer of another version (its crc32 right) is refused with the message that says so.
    @Test func refusesAnotherVersion() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/other.sst"
        var example = try Self.documentedExample("table-v5-example")
        let footer = example.count - 60
        for version: UInt8 in [3, 6] {
            example[footer + 8] = version
            let crc = ctf_crc32(0, Array(example[footer..<(footer + 56)]), 56)
            withUnsafeBytes(of: crc.littleEndian) { example.replaceSubrange((footer + 56)..<(footer + 60), with: $0) }
            try Data(example).write(to: URL(fileURLWithPath: path))
            do {
                _ = try Opened(path: path)
                Issue.record("a table footer of version \(version) was accepted")
            } catch {
                #expect("\(error)".contains("not a table footer of version 4 or 5"), "\(error)")
            }
        }
    }

    /// A table the engine wrote by `compact()` (keys of 1 … 40 bytes, values of 0 … 3,000 bytes,
    /// some overwritten, some deleted, two blobs) reads as the engine's scan does, entry by entry:
    /// a version-5 table whose partitions are cut by their index partitions' size.
    @Test(arguments: [0, 3]) func readsATableTheEngineWrote(compressionLevel: Int) throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try LogStore.open(at: directory, options: Self.options(compressionLevel: compressionLevel))
        var random = SplitMix(state: 0x5EED_0000_0000_0001 &+ UInt64(compressionLevel))
        let words = ["alpha", "beta", "gamma", "delta", "table", "block", "restart", "{\"id\":", "\"name\":"]
        func value() -> [UInt8] {
            var bytes: [UInt8] = []
            let length = Int(random.next() % 3_000)
            while bytes.count < length {
                bytes += Array(words[Int(random.next() % UInt64(words.count))].utf8) + [UInt8(random.next() & 0xFF)]
            }
            return Array(bytes.prefix(length))
        }
        var keys: [[UInt8]] = []
        for _ in 0..<4 {
            var batch = WriteBatch()
            for _ in 0..<1_000 {
                // Shared prefixes of various lengths, so that entries share 0 … many bytes.
                let key = Array("k/".utf8.prefix(Int(random.next() % 3)))
                    + (0..<(1 + Int(random.next() % 38))).map { _ in UInt8(random.next() % 7) &+ 0x61 }
                keys.append(key)
                batch.put(key, value())
            }
            _ = try store.commit(batch)
        }
        var changes = WriteBatch()
        for key in keys.prefix(200) { changes.put(key, value()) }
        for key in keys.dropFirst(200).prefix(100) { changes.delete(key) }
        changes.putExternal(Self.bytes("blob/1"), value() + Array(repeating: 7, count: 100_000))
        changes.putExternal(Self.bytes("blob/2"), Array(repeating: 9, count: 10))
        _ = try store.commit(changes)

        var absent: [[UInt8]] = [[0x00], [0xFF, 0xFF], Self.bytes("k/"), Self.bytes("blob/0"), Self.bytes("blob/3")]
        absent += keys.prefix(300).map { $0 + [0x00] }
        absent += keys.dropFirst(200).prefix(100)
        let table = try Self.compactAndCompare(store, in: directory, absent: absent)
        #expect(ctf_block_count(table.table) > 10)
        #expect((ctf_zlib_block_count(table.table) > 0) == (compressionLevel > 0))
    }

    /// A table the engine wrote by `compact()` of 30,000 small records (keys of 12 … 17 bytes,
    /// values of 0 … 40 bytes): many entries per data block and per restart interval, partitions
    /// cut by their filters' keys, several of them.
    @Test(arguments: [0, 3]) func readsATableOfManyPartitionsTheEngineWrote(compressionLevel: Int) throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try LogStore.open(at: directory, options: Self.options(compressionLevel: compressionLevel))
        var random = SplitMix(state: 0x5EED_0000_0000_0101 &+ UInt64(compressionLevel))
        var keys: [[UInt8]] = []
        for batchIndex in 0..<30 {
            var batch = WriteBatch()
            for i in 0..<1_000 {
                let n = batchIndex * 1_000 + i
                // "user/" and a number of 7 … 12 digits, scattered over the key space.
                let key = Self.bytes("user/\(UInt64(n) &* 2_654_435_761 % 100_000_000_000 + 1_000_000)")
                keys.append(key)
                // Compressible values (zlib pays for the blocks at level 3).
                batch.put(key, Self.bytes(String(repeating: "v\(n % 10)", count: Int(random.next() % 21))))
            }
            _ = try store.commit(batch)
        }
        var changes = WriteBatch()
        for key in keys.prefix(500) { changes.put(key, Self.bytes("overwritten")) }
        for key in keys.dropFirst(500).prefix(500) { changes.delete(key) }
        _ = try store.commit(changes)

        var absent: [[UInt8]] = [[0x00], [0xFF], Self.bytes("user/"), Self.bytes("user/0"), Self.bytes("user/:"), Self.bytes("v")]
        absent += keys.prefix(1_000).map { $0 + [0x00] }
        absent += keys.prefix(1_000).map { Array($0.dropLast()) }
        absent += keys.dropFirst(500).prefix(500)
        let table = try Self.compactAndCompare(store, in: directory, absent: absent)
        #expect(ctf_partition_count(table.table) >= 4)
        #expect(ctf_block_count(table.table) > 4 * ctf_partition_count(table.table))
        #expect((ctf_zlib_block_count(table.table) > 0) == (compressionLevel > 0))
    }

    static func options(compressionLevel: Int) -> LogStore.Options {
        var options = LogStore.Options()
        options.compressionLevel = compressionLevel
        options.compaction = .manual
        options.syncMode = .none
        return options
    }

    /// SplitMix64: a reproducible stream of test data.
    struct SplitMix {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Compacts `store` into its one table file, closes it, and checks the C reader against the
    /// engine: a version-5 table of 2 or more partitions whose every entry (cursor, in order) is
    /// the engine's scan's (key, kind, sequence, value); every key found by ctf_get and
    /// ctf_lookup_all, none of `absent` that the table does not hold; the scan's totals right.
    static func compactAndCompare(_ store: LogStore, in directory: String, absent: [[UInt8]]) throws -> Opened {
        _ = try store.compact()
        var expected: [(key: [UInt8], kind: UInt8, sequence: UInt64, value: [UInt8])] = []
        var cursor = try store.scan(prefix: [])
        while let entry = try cursor.next() {
            expected.append((entry.key, entry.isBlob ? 3 : 1, entry.sequence, entry.isBlob ? [] : try entry.value()))
        }
        try store.close()
        let tables = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".sst") }
        #expect(tables.count == 1)
        let table = try Opened(path: directory + "/" + (try #require(tables.first)))

        #expect(ctf_version(table.table) == 5)
        #expect(ctf_partition_count(table.table) >= 2)
        #expect(ctf_entry_count(table.table) == UInt64(expected.count))
        let entries = table.entries()
        #expect(entries.count == expected.count)
        for (mine, theirs) in zip(entries, expected) {
            #expect(mine.key == theirs.key && mine.kind == theirs.kind && mine.sequence == theirs.sequence)
            #expect(mine.kind == 3 ? mine.value.count == 33 : mine.value == theirs.value)
        }

        for entry in expected {
            let found = try #require(table.get(entry.key), "ctf_get does not find a key the engine's scan returned")
            #expect(found.kind == entry.kind && found.sequence == entry.sequence)
            if entry.kind == 1 { #expect(found.value == entry.value) }
        }
        let present = Set(expected.map(\.key))
        for key in absent where !present.contains(key) {
            #expect(table.get(key) == nil, "ctf_get finds a key the table does not hold")
        }

        let values = expected.filter { $0.kind == 1 }
        let looked = table.lookupAll(expected.map(\.key))
        #expect(looked.found == UInt64(values.count))
        #expect(looked.valueBytes == UInt64(values.reduce(0) { $0 + $1.value.count }))
        let totals = table.scan()
        #expect(totals.entries == UInt64(expected.count))
        #expect(totals.key_bytes == UInt64(expected.reduce(0) { $0 + $1.key.count }))
        #expect(totals.value_bytes == UInt64(values.reduce(0) { $0 + $1.value.count }) + 33 * UInt64(expected.count - values.count))
        #expect(totals.sequence_sum == expected.reduce(0) { $0 &+ $1.sequence })
        return table
    }
}
