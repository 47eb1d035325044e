@testable import Engine
import EngineTestSupport
import Testing

/// Every kind of file cut short — at every frame and block boundary, where a cut is hardest to
/// see, and at seeded random offsets: open and the reads after it either fail with an
/// `EngineError` (and a failed open changes no file), or the store holds exactly what it held.
/// Nothing is lost silently. Hints are derived: a cut one may be rebuilt.
@Suite struct TruncationTests {
    static let dir = "/truncated"

    static func options() -> LogStore.Options {
        var options = LogStore.Options()
        options.segmentSize = 64 << 10
        options.blockSize = 4 << 10  // several blocks per frame
        options.compaction = .manual
        return options
    }

    /// A store with every kind of file: two tables (the newer holding tombstones), a manifest, a
    /// sealed segment with its hint, the newest segment with the hint a clean close writes, and a
    /// blob. Values are incompressible, so that the log rolls over; later commits overwrite and
    /// delete keys the tables hold, so a lost frame would show as an old value or a key come back.
    static func store(options: LogStore.Options = options()) throws -> (FaultInjectingFileSystem, [[UInt8]: [UInt8]]) {
        let fs = FaultInjectingFileSystem()
        let store = try LogStore.open(at: dir, options: options, fileSystem: fs)
        var random = SeededGenerator(seed: 5)
        for round in 0..<40 {
            try store.write { batch in
                for index in 0..<5 { batch.put(bytes("a\(round)-\(index)"), random.bytes(500)) }
            }
        }
        try store.compact()
        for round in 0..<30 {
            try store.write { batch in
                for index in 0..<5 { batch.put(bytes("b\(round)-\(index)"), random.bytes(500)) }
                batch.put(bytes("a\(round % 40)-0"), bytes("overwritten in round \(round)"))
                batch.delete(bytes("a\(round % 40)-1"))
            }
            if round == 0 { try store.flushForTesting() }
        }
        try store.write { $0.putExternal(bytes("blob"), random.bytes(10_000)) }
        store.writePendingSegmentHints()
        let contents = try store.contents()
        try store.close()
        return (fs, contents)
    }

    static func u32(_ bytes: [UInt8], _ at: Int) -> Int {
        (0..<4).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) }
    }

    /// Where a segment's frames start, and the blocks inside each commit frame.
    static func segmentBoundaries(_ file: [UInt8]) -> [Int] {
        var result = [0, FormatTesting.segmentHeaderSize]
        var offset = FormatTesting.segmentHeaderSize
        while offset + FormatTesting.frameHeaderSize <= file.count {
            let payload = offset + FormatTesting.frameHeaderSize
            let end = payload + u32(file, offset + 8)
            if file[offset + 20] == 1 {
                var block = payload + 8
                result.append(block)
                while block + 16 <= end {
                    block += 16 + u32(file, block + 4)
                    result.append(block)
                }
            }
            offset = end
            result.append(offset)
        }
        return result
    }

    /// Where a table's data blocks, filter, index and footer start.
    static func tableBoundaries(_ file: [UInt8]) -> [Int] {
        guard let reader = try? TableReader(source: MemoryTableSource(bytes: file)),
            let handles = try? (0..<(try reader.dataBlockCount)).map({ (i: Int) throws(EngineError) in try reader.dataBlockHandle(i) })
        else { return [0] }
        var result = handles.map { Int($0.offset) }
        result += [Int(reader.footer.filter.offset), Int(reader.footer.index.offset), file.count - 60, file.count - 1]
        return result
    }

    /// A blob's header, each chunk and each chunk table entry.
    static func blobBoundaries(_ file: [UInt8]) -> [Int] {
        let tableEnd = file.count - 4
        var result = [0, 40, 44, tableEnd]
        // Chunks of at most 1 MiB: a 10,000-byte value has one, then its 12-byte table entry.
        let chunks = 1
        let tableStart = tableEnd - 12 * chunks
        result += [tableStart, tableStart + 4]
        return result
    }

    static func headerAndTail(_ file: [UInt8], header: Int) -> [Int] {
        [0, 8, 10, 12, 20, header, file.count - 4, file.count - 1] + Array(stride(from: header, to: file.count, by: 97))
    }

    /// Every file kind: a label, its path, and where to cut it besides the random offsets.
    static func kinds(_ fs: FaultInjectingFileSystem) throws -> [(label: String, path: String, cuts: (([UInt8]) -> [Int]), derived: Bool)] {
        let names = fs.names(in: dir).sorted()
        func path(_ suffix: String, last: Bool = false) throws -> String {
            let matching = names.filter { $0.hasSuffix(suffix) }
            return dir + "/" + (try #require(last ? matching.last : matching.first, "a \(suffix) file"))
        }
        let segments = names.filter { $0.hasSuffix(".wal") }
        try #require(segments.count >= 2, "a sealed segment and the newest")
        let blob = dir + "/blobs/" + (try #require(fs.names(in: dir + "/blobs").first, "a blob"))
        return [
            ("sealed segment", try path(".wal"), segmentBoundaries, false),
            ("newest segment", try path(".wal", last: true), segmentBoundaries, false),
            ("first table", try path(".sst"), tableBoundaries, false),
            ("last table", try path(".sst", last: true), tableBoundaries, false),
            ("sealed segment hint", try path(".walhint"), { headerAndTail($0, header: 72) }, true),
            ("newest segment hint", try path(".walhint", last: true), { headerAndTail($0, header: 72) }, true),
            ("manifest", dir + "/MANIFEST", { Array(0..<$0.count) }, false),
            ("blob", blob, blobBoundaries, false),
        ]
    }

    /// Cuts the file at `path` at each of `cuts`, opens and reads every key; returns how many cuts
    /// were refused with an error.
    static func checkCuts(
        _ base: FaultInjectingFileSystem, original: [[UInt8]: [UInt8]], label: String, path: String,
        cuts: [Int], derived: Bool, options: LogStore.Options
    ) throws -> Int {
        let file = try #require(base.contents(of: path))
        var failed = 0
        for cut in cuts {
            let context = "\(label) \(path) cut at \(cut) of \(file.count)"
            let fs = base.clone()
            fs.setContents(Array(file.prefix(cut)), of: path)
            let before = VersionRuleTests.snapshot(fs, dir: dir)
            let store: LogStore
            do {
                store = try LogStore.open(at: dir, options: options, fileSystem: fs)
            } catch {
                failed += 1
                #expect(!derived, "\(context): a cut hint is rebuilt, \(error)")
                let unchanged = VersionRuleTests.snapshot(fs, dir: dir) == before
                #expect(unchanged, "\(context): a failed open changed the files (\(error))")
                continue
            }
            do {
                let contents = try store.contents()
                let same = contents == original
                #expect(same, "\(context): opened with \(contents.count) keys of \(original.count), or other values")
                try store.close()
                // What open rebuilt or cut off is what a second open sees.
                let again = try LogStore.open(at: dir, options: options, fileSystem: fs)
                let sameAgain = try again.contents() == original
                #expect(sameAgain, "\(context): reopened")
                try again.close()
            } catch let error as EngineError {
                failed += 1
                #expect(!derived, "\(context): \(error)")
                try? store.close()
            }
        }
        return failed
    }

    /// The boundaries `boundaries` finds in the file at `path`, and 20 random offsets.
    static func cuts(_ fs: FaultInjectingFileSystem, path: String, boundaries: ([UInt8]) -> [Int], random: inout SeededGenerator) throws -> [Int] {
        let file = try #require(fs.contents(of: path))
        var cuts = Set(boundaries(file).filter { (0..<file.count).contains($0) })
        #expect(cuts.count >= 3, "\(path): boundaries found")
        for _ in 0..<20 { cuts.insert(Int.random(in: 0..<file.count, using: &random)) }
        return cuts.sorted()
    }

    @Test func everyFileCutAtEveryBoundaryOrAtRandomIsAnErrorOrLosesNothing() throws {
        let (base, original) = try Self.store()
        var random = SeededGenerator(seed: 23)
        let kinds = try Self.kinds(base)
        #expect(Set(kinds.map(\.path)).count == kinds.count, "one file of each kind: \(base.names(in: Self.dir).sorted())")
        for kind in kinds {
            let cuts = try Self.cuts(base, path: kind.path, boundaries: kind.cuts, random: &random)
            let failed = try Self.checkCuts(
                base, original: original, label: kind.label, path: kind.path, cuts: cuts, derived: kind.derived,
                options: Self.options())
            if !kind.derived { #expect(failed > 0, "\(kind.label): some cut is refused") }
        }
    }

    /// Without segment hints, a frame of the newest segment before the log end a clean close
    /// recorded that fails its checks — its length forged to run past the file's end with the
    /// header's crc32 recomputed (a write cut short, to the reader), or a byte of its payload
    /// flipped — is corruption with every file unchanged, not a torn tail cut off with the
    /// commits after it.
    @Test func withoutSegmentHintsADamagedFrameBeforeTheRecordedLogEndIsCorruption() throws {
        var options = Self.options()
        options.writesSegmentHints = false
        let (base, _) = try Self.store(options: options)
        let newest = Self.dir + "/" + (try #require(base.names(in: Self.dir).sorted().last { $0.hasSuffix(".wal") }))
        let file = try #require(base.contents(of: newest))
        var frames: [Int] = []
        var offset = FormatTesting.segmentHeaderSize
        while offset + FormatTesting.frameHeaderSize <= file.count, file[offset + 20] == 1 {
            frames.append(offset)
            offset += FormatTesting.frameHeaderSize + Self.u32(file, offset + 8)
        }
        #expect(frames.count >= 2, "the newest segment holds \(frames.count) commit frames")
        for frame in [frames[frames.count / 2], frames.last!] {
            var forged = file
            // Past the end of the file: the frame reads as a write cut short.
            let length = UInt32(file.count - frame)
            for i in 0..<4 { forged[frame + 8 + i] = UInt8(truncatingIfNeeded: length >> (8 * UInt32(i))) }
            let headerCRC = checksum(forged[(frame + 8)..<(frame + 32)])
            for i in 0..<4 { forged[frame + 4 + i] = UInt8(truncatingIfNeeded: headerCRC >> (8 * UInt32(i))) }
            var flipped = file
            flipped[frame + FormatTesting.frameHeaderSize + 3] ^= 0x40
            for (label, bytes) in [("forged length", forged), ("flipped payload byte", flipped)] {
                let fs = base.clone()
                fs.setContents(bytes, of: newest)
                let before = VersionRuleTests.snapshot(fs, dir: Self.dir)
                let error = BlobTests.engineError { _ = try LogStore.open(at: Self.dir, options: options, fileSystem: fs) }
                #expect(error?.code == .corruption, "\(label) at \(frame): \(String(describing: error))")
                #expect(error?.path == newest && error?.offset == UInt64(frame), "\(label) at \(frame)")
                let unchanged = VersionRuleTests.snapshot(fs, dir: Self.dir) == before
                #expect(unchanged, "\(label) at \(frame): files changed")
            }
        }
    }

    /// Without segment hints, a clean close records in the manifest where the log ends (the newest
    /// segment and the end of its last commit): a newest segment cut short of that after a clean
    /// close is corruption with every file unchanged, and a cut inside the close frame loses
    /// nothing.
    @Test func withoutSegmentHintsTheNewestSegmentCutShortIsCorruption() throws {
        var options = Self.options()
        options.writesSegmentHints = false
        let (base, original) = try Self.store(options: options)
        let newest = Self.dir + "/" + (try #require(base.names(in: Self.dir).sorted().last { $0.hasSuffix(".wal") }))
        var random = SeededGenerator(seed: 29)
        let cuts = try Self.cuts(base, path: newest, boundaries: Self.segmentBoundaries, random: &random)
        let failed = try Self.checkCuts(
            base, original: original, label: "newest segment, no hints", path: newest, cuts: cuts, derived: false,
            options: options)
        #expect(failed > 0)
    }
}
