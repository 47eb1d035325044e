import Engine
import EngineTestSupport

/// Seed inputs for every target, cut from stores the engine writes into an in-memory file
/// system: `walstore-fuzz seeds <directory>` writes them (Fuzz/README.md).
public enum Seeds {
    /// Named seed inputs for each target (flags byte first, as ``FuzzTarget/run(_:)`` reads).
    public static func make() throws -> [FuzzTarget: [(name: String, bytes: [UInt8])]] {
        var seeds: [FuzzTarget: [(name: String, bytes: [UInt8])]] = [:]
        let small = try writeStore(large: false)
        let large = try writeStore(large: true)
        seeds[.store] = [("small", [0] + small.encoded), ("large", [0] + large.encoded)]

        func files(_ image: StoreImage, kind: UInt8) -> [StoreImage.File] { image.files.filter { $0.kind == kind } }
        let smallSegments = files(small, kind: 0)
        let largeSegments = files(large, kind: 0)
        // The tiny store's newest segment (read as newest), a sealed segment of the large one.
        seeds[.segment] = [
            ("small-newest", [FuzzTarget.Flags.newest.rawValue] + smallSegments.last!.bytes),
            ("large-sealed", [0] + largeSegments.first!.bytes),
        ]
        // Commit payloads: the first frames of the small store's segment, and some large ones.
        var payloads: [[UInt8]] = []
        for segment in [smallSegments.last!.bytes, largeSegments.first!.bytes] {
            payloads += frames(of: segment).prefix(3)
        }
        seeds[.commit] = payloads.enumerated().map { ("payload-\($0.offset)", [0] + $0.element) }

        let (pack, packHint) = try format3Pack()
        seeds[.pack] = [("pack", [0] + pack)]
        var packSize = [UInt8](repeating: 0, count: 8)
        Repair.store64(&packSize, 0, UInt64(pack.count))
        seeds[.packHint] = [("hint", [0] + packSize + packHint)]

        var segmentHints: [(name: String, bytes: [UInt8])] = []
        for (label, image, newest) in [("small-newest", small, true), ("large-sealed", large, false)] {
            guard
                let hint = files(image, kind: 1).first(where: { hint in
                    files(image, kind: 0).contains { $0.number == hint.number }
                })
            else { continue }
            let segment = files(image, kind: 0).first { $0.number == hint.number }!
            var length = [UInt8](repeating: 0, count: 4)
            Repair.store32(&length, 0, UInt32(hint.bytes.count))
            let flags = newest ? FuzzTarget.Flags.newest.rawValue : 0
            segmentHints.append((label, [flags] + length + hint.bytes + segment.bytes))
        }
        seeds[.segmentHint] = segmentHints
        seeds[.manifest] = [("manifest", [0] + files(large, kind: 4)[0].bytes)]
        seeds[.blob] = files(small, kind: 5).enumerated().map { index, blob in
            // The reference the log holds for the blob, rebuilt from its header.
            var reference = Array(blob.bytes[16..<32])
            var fileLength = [UInt8](repeating: 0, count: 8)
            Repair.store64(&fileLength, 0, UInt64(blob.bytes.count))
            reference += fileLength + Array(blob.bytes[32..<40]) + [blob.bytes[10]]
            return ("blob-\(index)", [0] + reference + blob.bytes)
        }
        seeds.merge(try tableSeeds()) { $1 }
        seeds[.record] = RecordTarget.seeds()
        return seeds
    }

    /// A format-3 pack and its hint (what the upgrade at open reads), as a format-3 build wrote them.
    static func format3Pack() throws -> (pack: [UInt8], hint: [UInt8]) {
        let fileSystem = FaultInjectingFileSystem()
        _ = try fileSystem.createDirectory(StoreImage.directory)
        var random = SeededGenerator(seed: 3)
        let records = (0..<300).map { index in
            (key: Array("key-\(1000 + index)".utf8), sequence: UInt64(index + 1), value: random.bytes(index % 7 == 0 ? 400 : 60))
        }
        try DecoderHooks.writeFormat3Pack(number: 1, records: records, directory: StoreImage.directory, fileSystem: fileSystem)
        return (
            fileSystem.contents(of: StoreImage.directory + "/0000000000000001.pack")!,
            fileSystem.contents(of: StoreImage.directory + "/0000000000000001.hint")!
        )
    }

    /// Seeds for the table targets: a small table of every kind of entry in several blocks, and
    /// its blocks and footer cut out of it.
    static func tableSeeds() throws -> [FuzzTarget: [(name: String, bytes: [UInt8])]] {
        var random = SeededGenerator(seed: 4)
        var entries: [(key: [UInt8], sequence: UInt64, kind: UInt8, value: [UInt8])] = []
        for i in 0..<120 {
            let kind: UInt8 = i % 11 == 0 ? 2 : (i % 17 == 0 ? 3 : 1)
            let value = i % 5 == 0 ? [UInt8](repeating: UInt8(i), count: 300) : random.bytes(i % 40)
            entries.append((Array("user/\(1000 + i)/name".utf8), UInt64(i + 1), kind, value))
        }
        // Version 5 with small partitions (several of them), and version 4.
        let table = try DecoderHooks.buildTable(entries, blockSize: 1024, partitionSize: 64)
        let layout = try DecoderHooks.tableLayout(table)
        let table4 = try DecoderHooks.buildTable(entries, blockSize: 1024, version: 4)
        let layout4 = try DecoderHooks.tableLayout(table4)
        func u64(_ value: UInt64) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: 8)
            Repair.store64(&bytes, 0, value)
            return bytes
        }
        let partition = layout.partitions[min(1, layout.partitions.count - 1)]
        let separatorLength = [UInt8(partition.separator.count & 0xFF), UInt8(partition.separator.count >> 8)]
        let count = withUnsafeBytes(of: layout.partitionCount.littleEndian) { Array($0) }
        let empty = try DecoderHooks.buildTable([])
        return [
            .table: [("table", [0] + table), ("table-v4", [0] + table4), ("empty", [0] + empty)],
            .tableBlock: [("first", [0] + table[layout.dataBlocks[0]]), ("last", [0] + table[layout.dataBlocks.last!])],
            .tableIndex: [("index", [0] + u64(UInt64(layout4.filter.lowerBound)) + table4[layout4.index])],
            .tableFilter: [("filter", [0] + table4[layout4.filter]), ("filter-partition", [0] + table[partition.filter])],
            .tableTopIndex: [
                (
                    "top-index",
                    [0] + u64(UInt64(layout.filter.lowerBound)) + u64(UInt64(layout.filter.count)) + count + table[layout.index]
                )
            ],
            .tableIndexPartition: [
                (
                    "index-partition",
                    [0] + u64(partition.data.lowerBound) + u64(partition.data.upperBound) + separatorLength + partition.separator
                        + table[partition.index]
                )
            ],
            .tableFooter: [
                ("footer", [0] + u64(UInt64(table.count)) + Array(table.suffix(60))),
                ("footer-v4", [0] + u64(UInt64(table4.count)) + Array(table4.suffix(60))),
            ],
        ]
    }

    /// The payloads of a segment's frames.
    static func frames(of segment: [UInt8]) -> [[UInt8]] {
        var payloads: [[UInt8]] = []
        var offset = 32
        while offset + 32 <= segment.count {
            let length = Int(Repair.load32(segment, offset + 8))
            guard length > 0, length <= segment.count - offset - 32 else { break }
            payloads.append(Array(segment[offset + 32..<offset + 32 + length]))
            offset += 32 + length
        }
        return payloads
    }

    /// Writes a store and returns its files. The small one: a few commits, a compressible and a
    /// raw blob, a delete, a clean close (the newest segment's hint). The large one adds several
    /// 64 KiB segments, a compaction (a table and the manifest), sealed segments' hints.
    static func writeStore(large: Bool) throws -> StoreImage {
        let fileSystem = FaultInjectingFileSystem()
        var options = StoreImage.options
        options.blobThreshold = 4 << 10
        options.writesSegmentHints = true
        var random = SeededGenerator(seed: large ? 2 : 1)
        func value(_ index: Int, size: Int) -> [UInt8] {
            // Half text, half noise: compressible, but not to nothing.
            let text = Array(String(repeating: "value \(index) ", count: size / 20 + 1).utf8.prefix(size / 2))
            return text + random.bytes(size - text.count)
        }
        let store = try LogStore.open(at: StoreImage.directory, options: options, fileSystem: fileSystem)
        let keys = large ? 300 : 6
        func commits(_ round: Int) throws {
            for start in stride(from: 0, to: keys, by: 4) {
                _ = try store.write { batch in
                    for index in start..<min(start + 4, keys) {
                        batch.put(Array("key-\(index)".utf8), value(index + round, size: large ? 160 : 40))
                    }
                    if start % 12 == 8 { batch.delete(Array("key-\(start - 5)".utf8)) }
                }
            }
        }
        try commits(0)
        _ = try store.write { batch in
            batch.put(Array("blob-text".utf8), Array(String(repeating: "a compressible blob ", count: 300).utf8))
        }
        _ = try store.write { batch in batch.put(Array("blob-noise".utf8), random.bytes(5000)) }
        if large {
            try commits(1)
            _ = try store.compact()
            try commits(2)
            try commits(3)
            store.writePendingSegmentHints()
        }
        try store.close()
        return StoreImage.capture(StoreImage.directory, in: fileSystem)
    }
}
