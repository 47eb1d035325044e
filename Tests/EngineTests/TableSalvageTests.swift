@testable import Engine
import EngineTestSupport
import Foundation
import Testing

/// Salvaging a damaged table: a whole table gives back all its entries; after any one bit flip
/// or any truncation, salvage never traps, never returns an entry the table did not hold, and
/// keeps every entry of every data block the damage did not touch, finding the blocks by walking
/// the file when the footer or the index is gone.
@Suite struct TableSalvageTests {
    /// A small table of several data blocks (some compressed) and its entries, block by block.
    struct Fixture {
        let bytes: [UInt8]
        let entries: [TableEntry]
        let blocks: [(handle: BlockHandle, entries: [TableEntry])]
        let footer: TableFooter
        /// Version 5: the partitions (each names two or three data blocks); version 4: one.
        let partitions: [TableReader.Partition]

        init(version: UInt16 = TableFormat.version) throws {
            let (bytes, entries) = try TableCorruptionTests.smallTable(version: version)
            let reader = try TableReader(source: MemoryTableSource(bytes: bytes, path: "/t.sst"))
            partitions = try reader.metadataLoaded().partitions
            var blocks: [(BlockHandle, [TableEntry])] = []
            for index in 0..<(try reader.dataBlockCount) {
                let blockEntries = try reader.entries(ofBlock: index)
                blocks.append((try reader.dataBlockHandle(index), blockEntries))
            }
            self.bytes = bytes
            self.entries = entries
            self.blocks = blocks
            self.footer = reader.footer
        }

        /// Checks what `salvage` of a damaged copy (whose bytes `touched` differ or are gone)
        /// returned: only entries of the table, and all entries of every block `touched` missed.
        func check(_ salvage: TableSalvage, touched: Range<Int>, _ what: String) {
            let byKey = Dictionary(uniqueKeysWithValues: entries.map { ($0.key, $0) })
            for entry in salvage.entries where byKey[entry.key] != entry {
                Issue.record("\(what): salvage returned an entry the table did not hold: \(entry)")
            }
            #expect(
                zip(salvage.entries, salvage.entries.dropFirst()).allSatisfy { compareBytes($0.key, $1.key) < 0 },
                "\(what): entries are not in ascending key order, each key once")
            let returned = Set(salvage.entries.map(\.key))
            for block in blocks {
                let range = Int(block.handle.offset)..<Int(block.handle.offset + block.handle.length)
                guard !range.overlaps(touched) else { continue }
                #expect(block.entries.allSatisfy { returned.contains($0.key) }, "\(what): lost block \(range) it did not touch")
            }
        }
    }

    typealias Loss = TableSalvage.Loss

    static func salvage(_ bytes: [UInt8]) throws -> TableSalvage {
        try TableSalvage(source: MemoryTableSource(bytes: bytes, path: "/t.sst"))
    }

    @Test(arguments: [TableFormat.unpartitionedVersion, TableFormat.version])
    func aWholeTableSalvagesToAllItsEntriesThroughItsIndex(version: UInt16) throws {
        let fixture = try Fixture(version: version)
        #expect(fixture.blocks.count >= 5)
        #expect(fixture.partitions.count >= (version == 5 ? 2 : 1))
        let salvage = try Self.salvage(fixture.bytes)
        #expect(salvage.isClean && salvage.losses.isEmpty)
        #expect(salvage.method == .index)
        #expect(salvage.entries == fixture.entries)
        #expect(salvage.keptBlocks == fixture.blocks.map(\.handle))
    }

    @Test(arguments: [TableFormat.unpartitionedVersion, TableFormat.version])
    func anEmptyTableIsClean(version: UInt16) throws {
        var options = TableBuilder.Options()
        options.version = version
        let salvage = try Self.salvage(TableBuilder.build([], options: options))
        #expect(salvage.isClean && salvage.entries.isEmpty && salvage.keptBlocks.isEmpty)
    }

    @Test(arguments: [TableFormat.unpartitionedVersion, TableFormat.version])
    func everyBitFlipIsReportedWhereItIsAndLosesOnlyTheBlockItTouched(version: UInt16) throws {
        let fixture = try Fixture(version: version)
        for offset in fixture.bytes.indices {
            var damaged = fixture.bytes
            damaged[offset] ^= 1 << (offset % 8)
            let salvage = try Self.salvage(damaged)
            let what = "bit \(offset % 8) of byte \(offset)"
            #expect(!salvage.isClean, "\(what): reported clean")
            #expect(salvage.losses.contains { $0.range.contains(UInt64(offset)) }, "\(what): no loss covers it: \(salvage.losses)")
            fixture.check(salvage, touched: offset..<offset + 1, what)
        }
    }

    @Test(arguments: [TableFormat.unpartitionedVersion, TableFormat.version])
    func everyTruncationKeepsEveryWholeBlockBeforeTheCut(version: UInt16) throws {
        let fixture = try Fixture(version: version)
        for length in 0..<fixture.bytes.count {
            let salvage = try Self.salvage(Array(fixture.bytes.prefix(length)))
            let what = "cut to \(length) of \(fixture.bytes.count) bytes"
            #expect(salvage.method == .walk, "\(what)")
            #expect(salvage.losses.last?.reason == .cutShort, "\(what): \(salvage.losses)")
            #expect(salvage.losses.last?.range.upperBound == UInt64(length), "\(what): \(salvage.losses)")
            fixture.check(salvage, touched: length..<fixture.bytes.count, what)
        }
    }

    @Test(arguments: [TableFormat.unpartitionedVersion, TableFormat.version])
    func aDamagedFooterStillGivesEveryDataBlockByWalkingTheFile(version: UInt16) throws {
        let fixture = try Fixture(version: version)
        var damaged = fixture.bytes
        damaged[damaged.count - 30] ^= 0x10  // a handle's byte: the magic stays readable
        let salvage = try Self.salvage(damaged)
        #expect(salvage.method == .walk)
        #expect(salvage.entries == fixture.entries)
        #expect(salvage.keptBlocks == fixture.blocks.map(\.handle))
        #expect(salvage.losses.map(\.reason) == [.footerUnreadable])
        #expect(salvage.losses.first?.range == fixture.footer.filter.offset..<UInt64(damaged.count))
    }

    @Test func aDamagedVersion4IndexStillGivesEveryDataBlockByWalkingTheFile() throws {
        let fixture = try Fixture(version: 4)
        var damaged = fixture.bytes
        damaged[Int(fixture.footer.index.offset) + 2] ^= 0x40
        let salvage = try Self.salvage(damaged)
        #expect(salvage.method == .walk)
        #expect(salvage.entries == fixture.entries)
        #expect(salvage.keptBlocks == fixture.blocks.map(\.handle))
        #expect(salvage.losses.map(\.reason) == [.indexUnreadable])
        #expect(salvage.losses.first?.range == fixture.footer.index.offset..<fixture.footer.index.offset + fixture.footer.index.length)
    }

    @Test func aDamagedVersion4FilterLosesNoEntry() throws {
        let fixture = try Fixture(version: 4)
        var damaged = fixture.bytes
        damaged[Int(fixture.footer.filter.offset)] ^= 0x01
        let salvage = try Self.salvage(damaged)
        #expect(salvage.method == .index)
        #expect(salvage.entries == fixture.entries)
        #expect(salvage.losses.map(\.reason) == [.filterUnreadable])
    }

    @Test(arguments: [TableFormat.unpartitionedVersion, TableFormat.version])
    func aDamagedDataBlockIsLostAloneThroughTheIndex(version: UInt16) throws {
        let fixture = try Fixture(version: version)
        let victim = fixture.blocks[2]
        var damaged = fixture.bytes
        damaged[Int(victim.handle.offset) + 3] ^= 0x04
        let salvage = try Self.salvage(damaged)
        #expect(salvage.method == .index)
        #expect(
            salvage.losses == [
                Loss(
                    range: victim.handle.offset..<victim.handle.offset + victim.handle.length, reason: .checksumMismatch,
                    message: "table data block fails its crc32")
            ])
        #expect(salvage.entries == fixture.blocks.enumerated().filter { $0.offset != 2 }.flatMap(\.element.entries))
    }

    @Test(arguments: [TableFormat.unpartitionedVersion, TableFormat.version])
    func walkingFindsTheBlocksAfterADamagedOne(version: UInt16) throws {
        let fixture = try Fixture(version: version)
        for victim in [0, 2, fixture.blocks.count - 1] {
            let handle = fixture.blocks[victim].handle
            var damaged = fixture.bytes
            damaged[Int(handle.offset + handle.length / 2)] ^= 0x80
            damaged[damaged.count - 1] ^= 0x01  // and the footer: the index is out of reach
            let salvage = try Self.salvage(damaged)
            #expect(salvage.method == .walk)
            let survivors = fixture.blocks.enumerated().filter { $0.offset != victim }.map(\.element)
            #expect(salvage.keptBlocks == survivors.map(\.handle), "block \(victim)")
            #expect(salvage.entries == survivors.flatMap(\.entries), "block \(victim)")
            let lost = salvage.losses.first
            #expect(lost?.range.lowerBound == handle.offset, "block \(victim): \(salvage.losses)")
            if victim < fixture.blocks.count - 1 {
                #expect(lost?.range == handle.offset..<handle.offset + handle.length && lost?.reason == .checksumMismatch)
            }
        }
    }

    @Test(arguments: [TableFormat.unpartitionedVersion, TableFormat.version])
    func aCorruptDataBlockWhoseChecksumMatchesIsUndecodable(version: UInt16) throws {
        let fixture = try Fixture(version: version)
        let victim = fixture.blocks[1].handle
        var damaged = fixture.bytes
        let start = Int(victim.offset)
        let typeIndex = start + Int(victim.length) - 5
        damaged[typeIndex] = 7  // an unknown block type, its crc32 rewritten to match
        let crc = checksum(damaged[start...typeIndex])
        for i in 0..<4 { damaged[typeIndex + 1 + i] = UInt8(truncatingIfNeeded: crc >> (8 * i)) }
        let salvage = try Self.salvage(damaged)
        #expect(salvage.losses.map(\.reason) == [.undecodableBlock])
        #expect(salvage.losses.first?.range == victim.offset..<victim.offset + victim.length)
    }

    @Test func bytesThatAreNoTableGiveNothing() throws {
        var random = SeededGenerator(seed: 7)
        for length in [0, 1, 59, 60, 61, 4_000] {
            let salvage = try Self.salvage(random.bytes(length))
            #expect(salvage.entries.isEmpty && salvage.keptBlocks.isEmpty, "\(length) random bytes")
            #expect(salvage.losses.map(\.range) == [0..<UInt64(length)], "\(length) random bytes: \(salvage.losses)")
            #expect(salvage.losses.map(\.reason) == [.cutShort], "\(length) random bytes")
        }
    }

    @Test(arguments: [TableFormat.unpartitionedVersion, TableFormat.version])
    func aFooterOfAnotherVersionIsRefusedNotSalvaged(version: UInt16) throws {
        let fixture = try Fixture(version: version)
        var damaged = fixture.bytes
        let footer = damaged.count - TableFormat.footerSize
        damaged[footer + 8] = 6  // version 6, the footer's crc32 rewritten to match
        let crc = checksum(damaged[footer..<footer + 56])
        for i in 0..<4 { damaged[footer + 56 + i] = UInt8(truncatingIfNeeded: crc >> (8 * i)) }
        #expect {
            try Self.salvage(damaged)
        } throws: { error in
            (error as? EngineError)?.code == .unsupportedFormat
        }
    }
    @Test func aDamagedTopLevelIndexStillGivesEveryDataBlockByWalkingTheFile() throws {
        let fixture = try Fixture()
        var damaged = fixture.bytes
        damaged[Int(fixture.footer.index.offset) + 2] ^= 0x40
        let salvage = try Self.salvage(damaged)
        #expect(salvage.method == .walk)
        #expect(salvage.entries == fixture.entries)
        #expect(salvage.keptBlocks == fixture.blocks.map(\.handle))
        #expect(salvage.losses.map(\.reason) == [.indexUnreadable])
        #expect(salvage.losses.first?.range == fixture.footer.index.offset..<fixture.footer.index.offset + fixture.footer.index.length)
    }

    /// A damaged index partition: its own run of data blocks (where the top-level index says it
    /// lies) is walked, every other partition's blocks are found by their index, and a data block
    /// of the walked run that is damaged too is the only other loss.
    @Test func aDamagedIndexPartitionWalksOnlyItsOwnRunOfDataBlocks() throws {
        let fixture = try Fixture()
        #expect(fixture.partitions.count >= 3)
        let partition = fixture.partitions[1]
        var damaged = fixture.bytes
        damaged[Int(partition.index.offset) + 1] ^= 0x08
        let salvage = try Self.salvage(damaged)
        #expect(salvage.method == .walk)
        #expect(salvage.entries == fixture.entries)
        #expect(salvage.keptBlocks == fixture.blocks.map(\.handle))
        #expect(salvage.losses.map(\.reason) == [.indexUnreadable])
        #expect(salvage.losses.first?.range == partition.index.offset..<partition.index.end)
        // And a data block of that run.
        let victim = try #require(fixture.blocks.firstIndex { $0.handle.offset == partition.dataStart })
        damaged[Int(fixture.blocks[victim].handle.offset) + 2] ^= 0x02
        let both = try Self.salvage(damaged)
        #expect(both.keptBlocks == fixture.blocks.enumerated().filter { $0.offset != victim }.map(\.element.handle))
        #expect(both.entries == fixture.blocks.enumerated().filter { $0.offset != victim }.flatMap(\.element.entries))
        #expect(both.losses.map(\.reason) == [.checksumMismatch, .indexUnreadable])
        #expect(both.losses.first?.range == fixture.blocks[victim].handle.offset..<fixture.blocks[victim].handle.end)
    }

    @Test func aDamagedFilterPartitionLosesNoEntry() throws {
        let fixture = try Fixture()
        let partition = fixture.partitions[fixture.partitions.count - 1]
        var damaged = fixture.bytes
        damaged[Int(partition.filter.offset)] ^= 0x01
        let salvage = try Self.salvage(damaged)
        #expect(salvage.method == .index)
        #expect(salvage.entries == fixture.entries)
        #expect(salvage.losses.map(\.reason) == [.filterUnreadable])
        #expect(salvage.losses.first?.range == partition.filter.offset..<partition.filter.end)
    }
}
