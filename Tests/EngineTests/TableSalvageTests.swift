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

        init() throws {
            let (bytes, entries) = try TableCorruptionTests.smallTable()
            let reader = try TableReader(source: MemoryTableSource(bytes: bytes, path: "/t.sst"))
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

    @Test func aWholeTableSalvagesToAllItsEntriesThroughItsIndex() throws {
        let fixture = try Fixture()
        #expect(fixture.blocks.count >= 5)
        let salvage = try Self.salvage(fixture.bytes)
        #expect(salvage.isClean && salvage.losses.isEmpty)
        #expect(salvage.method == .index)
        #expect(salvage.entries == fixture.entries)
        #expect(salvage.keptBlocks == fixture.blocks.map(\.handle))
    }

    @Test func anEmptyTableIsClean() throws {
        let salvage = try Self.salvage(TableBuilder.build([]))
        #expect(salvage.isClean && salvage.entries.isEmpty && salvage.keptBlocks.isEmpty)
    }

    @Test func everyBitFlipIsReportedWhereItIsAndLosesOnlyTheBlockItTouched() throws {
        let fixture = try Fixture()
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

    @Test func everyTruncationKeepsEveryWholeBlockBeforeTheCut() throws {
        let fixture = try Fixture()
        for length in 0..<fixture.bytes.count {
            let salvage = try Self.salvage(Array(fixture.bytes.prefix(length)))
            let what = "cut to \(length) of \(fixture.bytes.count) bytes"
            #expect(salvage.method == .walk, "\(what)")
            #expect(salvage.losses.last?.reason == .cutShort, "\(what): \(salvage.losses)")
            #expect(salvage.losses.last?.range.upperBound == UInt64(length), "\(what): \(salvage.losses)")
            fixture.check(salvage, touched: length..<fixture.bytes.count, what)
        }
    }

    @Test func aDamagedFooterStillGivesEveryDataBlockByWalkingTheFile() throws {
        let fixture = try Fixture()
        var damaged = fixture.bytes
        damaged[damaged.count - 30] ^= 0x10  // a handle's byte: the magic stays readable
        let salvage = try Self.salvage(damaged)
        #expect(salvage.method == .walk)
        #expect(salvage.entries == fixture.entries)
        #expect(salvage.keptBlocks == fixture.blocks.map(\.handle))
        #expect(salvage.losses.map(\.reason) == [.footerUnreadable])
        #expect(salvage.losses.first?.range == fixture.footer.filter.offset..<UInt64(damaged.count))
    }

    @Test func aDamagedIndexStillGivesEveryDataBlockByWalkingTheFile() throws {
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

    @Test func aDamagedFilterLosesNoEntry() throws {
        let fixture = try Fixture()
        var damaged = fixture.bytes
        damaged[Int(fixture.footer.filter.offset)] ^= 0x01
        let salvage = try Self.salvage(damaged)
        #expect(salvage.method == .index)
        #expect(salvage.entries == fixture.entries)
        #expect(salvage.losses.map(\.reason) == [.filterUnreadable])
    }

    @Test func aDamagedDataBlockIsLostAloneThroughTheIndex() throws {
        let fixture = try Fixture()
        let victim = fixture.blocks[2]
        var damaged = fixture.bytes
        damaged[Int(victim.handle.offset) + 3] ^= 0x04
        let salvage = try Self.salvage(damaged)
        #expect(salvage.method == .index)
        #expect(salvage.losses == [Loss(range: victim.handle.offset..<victim.handle.offset + victim.handle.length, reason: .checksumMismatch, message: "table data block fails its crc32")])
        #expect(salvage.entries == fixture.blocks.enumerated().filter { $0.offset != 2 }.flatMap(\.element.entries))
    }

    @Test func walkingFindsTheBlocksAfterADamagedOne() throws {
        let fixture = try Fixture()
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

    @Test func aCorruptDataBlockWhoseChecksumMatchesIsUndecodable() throws {
        let fixture = try Fixture()
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

    @Test func aFooterOfAnotherVersionIsRefusedNotSalvaged() throws {
        let fixture = try Fixture()
        var damaged = fixture.bytes
        let footer = damaged.count - TableFormat.footerSize
        damaged[footer + 8] = 5  // version 5, the footer's crc32 rewritten to match
        let crc = checksum(damaged[footer..<footer + 56])
        for i in 0..<4 { damaged[footer + 56 + i] = UInt8(truncatingIfNeeded: crc >> (8 * i)) }
        #expect {
            try Self.salvage(damaged)
        } throws: { error in
            (error as? EngineError)?.code == .unsupportedFormat
        }
    }
}
