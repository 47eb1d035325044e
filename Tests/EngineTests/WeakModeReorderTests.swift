import Engine
import EngineTestSupport
import Testing

/// The weak sync modes under a power loss that wrote dirty pages back out of order (FORMAT.md
/// section 14, "Lost unsynced writes versus damaged durable data"): when the disk kept a later
/// unsynced page but lost an earlier one, open keeps the prefix before the hole, reports the
/// verified frames it dropped, and loses no commit before the last completed `sync()`; damage to
/// a frame a later frame names durable is corruption, and changes nothing.
@Suite struct WeakModeReorderTests {
    static let dir = "/reorder"
    static let segment = dir + "/0000000000000001.wal"
    static let commits = 24
    /// `sync()` is called after these commits; the last one is the durable point.
    static let syncs = [6, 12]

    /// One commit's operations: a put (value) or a delete (nil).
    typealias Operations = [(key: [UInt8], value: [UInt8]?)]

    /// The workload: each commit overwrites one of a few keys with an incompressible value (so
    /// frames are stored raw and span pages), adds a key of its own, and every fifth deletes one.
    static func workload() -> [Operations] {
        var random = SeededGenerator(seed: 11)
        return (1...commits).map { i in
            var operations: Operations = [
                (bytes("shared\(i % 5)"), random.bytes(1000 + 37 * (i % 4))),
                (bytes("own\(i)"), bytes("commit \(i)")),
            ]
            if i % 5 == 0 { operations.append((bytes("own\(i - 3)"), nil)) }
            return operations
        }
    }

    /// `states[n]`: the contents after the first n commits.
    static func prefixStates(_ workload: [Operations]) -> [[[UInt8]: [UInt8]]] {
        var states: [[[UInt8]: [UInt8]]] = [[:]]
        for operations in workload {
            var next = states.last!
            for (key, value) in operations { next[key] = value }
            states.append(next)
        }
        return states
    }

    static func batch(_ operations: Operations) -> WriteBatch {
        var batch = WriteBatch()
        for (key, value) in operations {
            if let value { batch.put(key, value) } else { batch.delete(key) }
        }
        return batch
    }

    static func options(_ mode: LogStore.SyncMode, preallocate: Bool) -> LogStore.Options {
        var options = LogStore.Options()
        options.syncMode = mode
        options.compaction = .manual
        options.segmentSize = 1 << 20  // no rollover: every commit lands in one segment
        // Small, so that the unsynced frames grow the file several times over.
        options.preallocationSize = preallocate ? 8 << 10 : 0
        return options
    }

    /// Runs the workload, syncing by hand at `syncs`, and stops there: the file system holds every
    /// write, and only what the syncs covered is durable.
    static func written(_ mode: LogStore.SyncMode, preallocate: Bool) throws -> FaultInjectingFileSystem {
        let fs = FaultInjectingFileSystem()
        let store = try LogStore.open(at: dir, options: options(mode, preallocate: preallocate), fileSystem: fs)
        for (index, operations) in workload().enumerated() {
            try store.commit(batch(operations))
            if syncs.contains(index + 1) { try store.sync() }
        }
        // The power goes before anything else is written: the store's handles die with it.
        fs.processCrash()
        return fs
    }

    /// The frames of a segment: their byte ranges, by sequence (index 0 is commit 1).
    static func frames(_ file: [UInt8]) -> [Range<Int>] {
        func u32(_ at: Int) -> Int { (0..<4).reduce(0) { $0 | Int(file[at + $1]) << (8 * $1) } }
        var result: [Range<Int>] = []
        var offset = FormatTesting.segmentHeaderSize
        while offset + FormatTesting.frameHeaderSize <= file.count, file[offset + 20] == 1 {
            let end = offset + FormatTesting.frameHeaderSize + u32(offset + 8)
            guard end <= file.count else { break }
            result.append(offset..<end)
            offset = end
        }
        return result
    }

    /// The pages of the segment a power loss could still take: those whose bytes differ from
    /// what the last sync made durable.
    static func unsyncedPages(_ fs: FaultInjectingFileSystem, pageSize: Int) throws -> [Int] {
        let current = try #require(fs.contents(of: segment))
        let lost = fs.clone()
        lost.powerLoss()
        let durable = try #require(lost.contents(of: segment))
        let span = max(current.count, durable.count)
        return (0..<(span + pageSize - 1) / pageSize).filter { page in
            (page * pageSize..<min((page + 1) * pageSize, span)).contains { i in
                i >= current.count || i >= durable.count || current[i] != durable[i]
            }
        }
    }

    static let modes: [LogStore.SyncMode] = [.none, .deferred(interval: .seconds(3600))]

    @Test(arguments: modes, [false, true])
    func losingAnEarlierUnsyncedPageKeepsThePrefixBeforeItAndEverySyncedCommit(
        mode: LogStore.SyncMode, preallocate: Bool
    ) throws {
        let workload = Self.workload()
        let states = Self.prefixStates(workload)
        let written = try Self.written(mode, preallocate: preallocate)
        let before = try #require(written.contents(of: Self.segment))
        let frames = Self.frames(before)
        try #require(frames.count == Self.commits, "every commit's frame is in the segment")
        for pageSize in [4096, 1024] {
            let unsynced = try Self.unsyncedPages(written, pageSize: pageSize)
            try #require(unsynced.count >= 3, "the unsynced frames span several pages")
            // Every unsynced page dropped in turn (the others kept), then every one but the last.
            var scenarios: [(label: String, keep: (Int) -> Bool)] = unsynced.map { dropped in
                ("page \(dropped) of \(pageSize) bytes lost", { $0 != dropped })
            }
            scenarios.append(("only the last page of \(pageSize) bytes kept", { $0 == unsynced.last! }))
            for (label, keep) in scenarios {
                let context = "\(mode), preallocation \(preallocate), \(label)"
                let fs = written.clone()
                fs.powerLoss(keepingUnsyncedPages: { path, page in path != Self.segment || keep(page) }, pageSize: pageSize)
                let after = try #require(fs.contents(of: Self.segment))
                // The commit whose frame the lost page damaged first, and the intact ones after it.
                let intact = frames.map { range in
                    range.upperBound <= after.count && Array(after[range]) == Array(before[range])
                }
                let firstDamaged = intact.firstIndex(of: false) ?? frames.count
                let intactAfter = intact[firstDamaged...].filter { $0 }.count

                let store = try LogStore.open(at: Self.dir, options: Self.options(mode, preallocate: preallocate), fileSystem: fs)
                let recovered = Int(store.statistics.lastSequence)
                #expect(recovered >= Self.syncs.last!, "\(context): every commit up to the last sync() is kept")
                #expect(recovered == firstDamaged, "\(context): the prefix before the first damaged frame")
                #expect(try store.contents() == states[min(recovered, Self.commits)], "\(context): contents of \(recovered) commits")
                #expect(store.statistics.recovery.discardedFrames == intactAfter, "\(context): dropped verified frames reported")
                #expect(intactAfter == 0 || store.statistics.recovery.discardedFrames > 0, "\(context)")

                // The log is appendable where recovery left it, and a reopen sees the same.
                var expected = states[min(recovered, Self.commits)]
                try store.write { $0.put(bytes("after"), bytes(label)) }
                expected[bytes("after")] = bytes(label)
                #expect(try store.contents() == expected, "\(context): a commit after recovery")
                try store.close()
                let reopened = try LogStore.open(at: Self.dir, options: Self.options(mode, preallocate: preallocate), fileSystem: fs)
                #expect(try reopened.contents() == expected, "\(context): reopened")
                try reopened.close()
            }
        }
    }

    /// The counter-case: a frame that a later verified frame names durable was on the disk before
    /// that frame was written, so damage to it is damaged durable data, not a lost write.
    @Test(arguments: modes, [false, true])
    func damageToASyncedFrameALaterFrameNamesDurableIsCorruptionAndChangesNothing(
        mode: LogStore.SyncMode, preallocate: Bool
    ) throws {
        let written = try Self.written(mode, preallocate: preallocate)
        let frames = Self.frames(try #require(written.contents(of: Self.segment)))
        // Every unsynced page kept: the frames after the last sync name commit 12 durable. Every
        // unsynced page lost: the frames after the first sync name commit 6 durable.
        for (keepsUnsynced, durable) in [(true, Self.syncs[1]), (false, Self.syncs[0])] {
            for commit in 1...durable {
                for at in [4, FormatTesting.frameHeaderSize + 3, frames[commit - 1].count - 1] {
                    let context = "\(mode), preallocation \(preallocate), unsynced pages kept \(keepsUnsynced), commit \(commit) byte \(at)"
                    let fs = written.clone()
                    fs.powerLoss(keepingUnsyncedPages: { _, _ in keepsUnsynced })
                    fs.flipBit(in: Self.segment, atByte: frames[commit - 1].lowerBound + at, bit: 2)
                    let snapshot = VersionRuleTests.snapshot(fs, dir: Self.dir)
                    let error = #expect(throws: EngineError.self, "\(context)") {
                        _ = try LogStore.open(at: Self.dir, options: Self.options(mode, preallocate: preallocate), fileSystem: fs)
                    }
                    #expect(error?.code == .corruption, "\(context): \(String(describing: error))")
                    #expect(error?.path == Self.segment, "\(context)")
                    #expect(error?.offset == UInt64(frames[commit - 1].lowerBound), "\(context): names the damaged frame")
                    let unchanged = VersionRuleTests.snapshot(fs, dir: Self.dir) == snapshot
                    #expect(unchanged, "\(context): the files changed")
                }
            }
        }
    }
}
