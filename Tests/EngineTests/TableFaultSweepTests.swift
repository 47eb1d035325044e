@testable import Engine
import EngineTestSupport
import Foundation
import Testing

/// Faults in the file kinds format 4 added, swept systematically over a small store: its table
/// (data blocks, filter and index partitions, the top-level index, the footer) cut at every
/// boundary and flipped in every part, and its manifest cut at every field boundary and flipped
/// in every byte. Each mutation is asserted to be what its part makes it — refused by open, or
/// found by the first read that needs the part — with a typed error naming the file, never a
/// wrong answer; and `LogStore.salvage(at:)` then repairs the store: it opens, and reads give
/// the right value or none (none only for keys of a damaged data block).
@Suite struct TableFaultSweepTests {
    static let dir = "/sweep"

    static func options() -> LogStore.Options {
        var options = LogStore.Options()
        options.compaction = .manual
        options.writesSegmentHints = false
        return options
    }

    /// What a mutation did.
    enum Outcome: Equatable, CustomStringConvertible {
        /// Open refused the store with `corruption` (or `unsupportedFormat`) naming the file.
        case refusedAtOpen
        /// Open went through; a read that needed the damaged part threw `corruption` naming it,
        /// and every other read gave the right answer.
        case foundByRead
        /// Every read gave the right answer.
        case harmless

        var description: String {
            switch self {
            case .refusedAtOpen: "refused at open"
            case .foundByRead: "found by a read"
            case .harmless: "harmless"
            }
        }
    }

    /// A closed store of 60 keys compacted into one table of several data blocks and several
    /// partitions; its file system, contents, table path and the table's parts.
    struct Fixture {
        let fs: FaultInjectingFileSystem
        let contents: [[UInt8]: [UInt8]]
        let table: String
        let manifest: String
        /// Each part of the table: its name and byte range.
        let parts: [(name: String, range: Range<Int>)]

        init() throws {
            fs = FaultInjectingFileSystem()
            let hooks = LogStore.TestHooks(tablePartitionBytes: 40)
            let store = try LogStore.open(at: TableFaultSweepTests.dir, options: TableFaultSweepTests.options(), fileSystem: fs, testHooks: hooks)
            var random = SeededGenerator(seed: 35)
            var contents: [[UInt8]: [UInt8]] = [:]
            try store.write { batch in
                for i in 0..<60 {
                    let key = bytes("key/\(100 + i)")
                    let value = random.bytes(150)
                    batch.put(key, value)
                    contents[key] = value
                }
            }
            try store.compact()
            try store.close()
            self.contents = contents
            let name = try #require(fs.names(in: TableFaultSweepTests.dir).first { $0.hasSuffix(".sst") })
            table = TableFaultSweepTests.dir + "/" + name
            manifest = TableFaultSweepTests.dir + "/" + LogFormat.manifestName
            let reader = try TableReader(source: MemoryTableSource(bytes: try #require(fs.contents(of: table))))
            let loaded = try reader.metadataLoaded()
            var parts: [(String, Range<Int>)] = []
            for (i, handle) in try reader.dataBlockHandles().enumerated() {
                parts.append(("data block \(i)", Int(handle.offset)..<Int(handle.end)))
            }
            for (i, partition) in loaded.partitions.enumerated() {
                parts.append(("filter partition \(i)", Int(partition.filter.offset)..<Int(partition.filter.end)))
                parts.append(("index partition \(i)", Int(partition.index.offset)..<Int(partition.index.end)))
            }
            parts.append(("top-level index", Int(reader.footer.index.offset)..<Int(reader.footer.index.end)))
            let size = Int(reader.footer.index.end)
            parts.append(("footer", size..<size + TableFormat.footerSize))
            self.parts = parts.sorted { $0.1.lowerBound < $1.1.lowerBound }
        }
    }

    /// Opens `fs`'s store and reads every key and one scan of them all: what the damage to
    /// `file` did. Records an issue for any wrong answer or an error of another kind or file.
    static func outcome(_ fs: FaultInjectingFileSystem, damaged file: String, contents: [[UInt8]: [UInt8]], _ what: String) -> Outcome {
        func check(_ error: EngineError) {
            #expect(error.code == .corruption || error.code == .unsupportedFormat, "\(what): \(error)")
            #expect(error.path == file, "\(what): the error names \(error.path ?? "no file"), not \(file)")
        }
        let store: LogStore
        do {
            store = try LogStore.open(at: dir, options: options(), fileSystem: fs)
        } catch {
            check(error)
            return .refusedAtOpen
        }
        defer { try? store.close() }
        var found = false
        for (key, value) in contents {
            do {
                let read = try store.value(forKey: key)
                #expect(read == value, "\(what): \(String(decoding: key, as: UTF8.self)) read wrong")
            } catch {
                check(error)
                found = true
            }
        }
        do {
            var scanned: [[UInt8]: [UInt8]] = [:]
            var cursor = try store.scan(prefix: bytes("key/"))
            while let entry = try cursor.next() { scanned[entry.key] = try entry.value() }
            #expect(scanned == contents, "\(what): the scan read wrong")
        } catch {
            check(error)
            found = true
        }
        return found ? .foundByRead : .harmless
    }

    /// Salvages `fs`'s store, then checks that it opens and reads each key right or not at
    /// all (not at all only when `mayLoseKeys`).
    static func expectRepaired(_ fs: FaultInjectingFileSystem, contents: [[UInt8]: [UInt8]], mayLoseKeys: Bool, _ what: String) {
        do {
            let report = try LogStore.salvage(at: dir, options: options(), fileSystem: fs)
            #expect(!report.isClean, "\(what): salvage found nothing")
            let store = try LogStore.open(at: dir, options: options(), fileSystem: fs)
            defer { try? store.close() }
            for (key, value) in contents {
                let read = try store.value(forKey: key)
                #expect(read == value || (mayLoseKeys && read == nil), "\(what): after salvage \(String(decoding: key, as: UTF8.self)) reads wrong")
            }
        } catch {
            Issue.record("\(what): salvage did not repair the store: \(error)")
        }
    }

    @Test func everyPartOfATableCutOrFlippedIsFoundNamingItAndSalvageRepairsIt() throws {
        let fixture = try Fixture()
        let intact = try #require(fixture.fs.contents(of: fixture.table))
        #expect(fixture.parts.filter { $0.name.hasPrefix("filter") }.count >= 2, "several partitions")
        #expect(fixture.parts.filter { $0.name.hasPrefix("data") }.count >= 2, "several data blocks")
        // The parts tile the file.
        #expect(zip(fixture.parts, fixture.parts.dropFirst()).allSatisfy { $0.range.upperBound == $1.range.lowerBound })
        #expect(fixture.parts.first?.range.lowerBound == 0 && fixture.parts.last?.range.upperBound == intact.count)
        var counts: [Outcome: Int] = [:]

        // Cut at every boundary between parts (and inside the footer): the length no longer
        // the manifest's, open refuses it.
        let boundaries = Set(fixture.parts.map(\.range.lowerBound) + [intact.count - 1, intact.count - TableFormat.footerSize / 2])
        for length in boundaries.sorted() {
            let what = "table cut to \(length) of \(intact.count) bytes"
            let fs = fixture.fs.clone()
            fs.setContents(Array(intact.prefix(length)), of: fixture.table)
            let outcome = Self.outcome(fs, damaged: fixture.table, contents: fixture.contents, what)
            #expect(outcome == .refusedAtOpen, "\(what): \(outcome)")
            counts[outcome, default: 0] += 1
            Self.expectRepaired(fs, contents: fixture.contents, mayLoseKeys: true, what)
        }

        // A bit flipped at the first, a middle and the last byte of every part (the footer: of
        // every field).
        let footerFields = [0, 8, 10, 12, 16, 24, 32, 40, 48, 52, 56]
        for part in fixture.parts {
            let offsets =
                part.name == "footer"
                ? footerFields.map { part.range.lowerBound + $0 }
                : [part.range.lowerBound, (part.range.lowerBound + part.range.upperBound) / 2, part.range.upperBound - 1]
            for offset in offsets {
                let what = "\(part.name): bit flipped at byte \(offset)"
                let fs = fixture.fs.clone()
                fs.flipBit(in: fixture.table, atByte: offset, bit: 3)
                let outcome = Self.outcome(fs, damaged: fixture.table, contents: fixture.contents, what)
                // Open reads the footer alone; every other part is checked when a read needs it.
                #expect(outcome == (part.name == "footer" ? .refusedAtOpen : .foundByRead), "\(what): \(outcome)")
                counts[outcome, default: 0] += 1
                Self.expectRepaired(fs, contents: fixture.contents, mayLoseKeys: part.name.hasPrefix("data"), what)
            }
        }
        #expect(counts[.harmless] == nil)
    }

    @Test func everyFieldOfTheManifestCutAndEveryByteFlippedIsRefusedNamingIt() throws {
        let fixture = try Fixture()
        let intact = try #require(fixture.fs.contents(of: fixture.manifest))
        let record = try Manifest(decoding: intact, path: fixture.manifest).tables[0]
        // The header's fields, then the one table entry's (number, level, length, entry count,
        // smallest key, largest key, blob count), then the crc32.
        var boundaries = [0, 8, 10, 12, 16, 24, 32, 40, 48, 56, 60]
        var at = 60
        for size in [8, 4, 8, 8, 2 + record.smallestKey.count, 2 + record.largestKey.count, 4 + 8 * record.blobIDs.count] {
            at += size
            boundaries.append(at)
        }
        #expect(at == intact.count - 4)
        for length in boundaries {
            let what = "manifest cut to \(length) of \(intact.count) bytes"
            let fs = fixture.fs.clone()
            fs.setContents(Array(intact.prefix(length)), of: fixture.manifest)
            let outcome = Self.outcome(fs, damaged: fixture.manifest, contents: fixture.contents, what)
            #expect(outcome == .refusedAtOpen, "\(what): \(outcome)")
        }
        for offset in intact.indices {
            let what = "manifest: bit flipped at byte \(offset)"
            let fs = fixture.fs.clone()
            fs.flipBit(in: fixture.manifest, atByte: offset, bit: 5)
            let outcome = Self.outcome(fs, damaged: fixture.manifest, contents: fixture.contents, what)
            #expect(outcome == .refusedAtOpen, "\(what): \(outcome)")
        }
    }
}
