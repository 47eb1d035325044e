import Engine
import EngineTestSupport

/// The fuzz targets: one per decoder of bytes read from disk, and one for a whole store.
///
/// Every input starts with a flags byte:
/// - bit 0 (``Flags/repair``): repair every checksum before decoding (``Repair``);
/// - bit 1 (``Flags/newest``): read the segment as the newest one (segment and segment-hint
///   targets), where a torn tail is allowed;
/// - bit 2 (``Flags/anySequence``): the segment-hint target passes no expected first sequence.
///
/// A target returns normally for any input it can decode and for any input the engine rejects
/// with a thrown error: the only failure is a trap (or an over-allocation, which libFuzzer's
/// `-malloc_limit_mb` reports).
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// A segment file through `LogReader` (header, frames, each frame's commit records).
    case segment
    /// A commit payload through `CommitDecoding.records` (blocks, inflation, records).
    case commit
    /// A pack file through `PackFile.scan` and `PackFile.forEachBlock`.
    case pack
    /// A pack's hint file through `HintFile.load`: flags, pack size (8 bytes), then the hint.
    case packHint = "pack-hint"
    /// A segment hint through `SegmentHint.load` and `checkLastFrame`: flags, the hint's length
    /// (4 bytes), the hint, then the segment.
    case segmentHint = "segment-hint"
    /// The manifest through `Manifest.read`.
    case manifest
    /// A blob through `BlobReader`: flags, a 33-byte blob reference, then the blob file.
    case blob
    /// A whole store directory (``StoreImage``) opened with `LogStore.open`, every key read.
    case store
    /// A sorted table's stored data block: trailer, inflation, restart array, every entry.
    case tableBlock = "table-block"
    /// A sorted table's stored index block (version 4): flags, the data's end (8 bytes), then the
    /// block.
    case tableIndex = "table-index"
    /// A sorted table's stored filter block (version 4) or filter partition (version 5), probed
    /// with a few keys.
    case tableFilter = "table-filter"
    /// A version-5 table's stored top-level index: flags, the data's end (8 bytes), the
    /// partitions' length (8 bytes), the partition count (4 bytes), then the block.
    case tableTopIndex = "table-top-index"
    /// A version-5 table's stored index partition: flags, its data's start and end (8 bytes
    /// each), the last separator the top-level index names (a 2-byte length, then the bytes),
    /// then the block.
    case tableIndexPartition = "table-index-partition"
    /// A sorted table's footer: flags, the table's size (8 bytes), then the 60-byte footer.
    case tableFooter = "table-footer"
    /// A whole sorted table opened with `TableReader`, scanned both ways, every key read.
    case table
    /// A records-format-2 record value through `RecordReader`, every field decoded under a fixed
    /// schema (the Snapshot layer's records, FORMAT.md §18).
    case record

    public struct Flags: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let repair = Flags(rawValue: 1)
        public static let newest = Flags(rawValue: 2)
        public static let anySequence = Flags(rawValue: 4)
    }

    /// Runs the target on one input. Any `EngineError` is an accepted outcome; returns true when
    /// the input decoded without one (and, for a segment hint, was found usable).
    @discardableResult
    public func run(_ input: [UInt8]) -> Bool {
        guard let first = input.first else { return false }
        if self == .record { return RecordTarget.run(Array(input.dropFirst())) }
        let flags = Flags(rawValue: first)
        var bytes = Array(input.dropFirst())
        do throws(EngineError) {
            switch self {
            case .segment: try Self.segment(&bytes, flags)
            case .commit:
                if flags.contains(.repair), bytes.count >= 8 { Repair.blocks(&bytes, in: 8..<bytes.count) }
                try DecoderHooks.commitRecords(payload: bytes)
            case .pack: try Self.pack(&bytes, flags)
            case .packHint: try Self.packHint(&bytes, flags)
            case .segmentHint: return try Self.segmentHint(&bytes, flags)
            case .manifest:
                if flags.contains(.repair) { Repair.trailingChecksum(&bytes) }
                let fileSystem = FaultInjectingFileSystem()
                try Self.write(bytes, to: "/store/MANIFEST", in: fileSystem)
                try DecoderHooks.readManifest(in: "/store", fileSystem: fileSystem)
            case .blob: try Self.blob(&bytes, flags)
            case .store: try StoreImage(bytes, repair: flags.contains(.repair)).openAndReadAll()
            case .tableBlock:
                if flags.contains(.repair) { Repair.trailingChecksum(&bytes) }
                try DecoderHooks.tableDataBlock(bytes)
            case .tableIndex:
                guard bytes.count >= 8 else { throw Self.short }
                var block = Array(bytes.dropFirst(8))
                if flags.contains(.repair) { Repair.trailingChecksum(&block) }
                try DecoderHooks.tableIndexBlock(block, dataEnd: Repair.load64(bytes, 0))
            case .tableTopIndex:
                guard bytes.count >= 20 else { throw Self.short }
                var block = Array(bytes.dropFirst(20))
                if flags.contains(.repair) { Repair.trailingChecksum(&block) }
                try DecoderHooks.tableTopIndex(
                    block, dataEnd: Repair.load64(bytes, 0), partitionsLength: Repair.load64(bytes, 8),
                    partitionCount: Repair.load32(bytes, 16))
            case .tableIndexPartition:
                guard bytes.count >= 18 else { throw Self.short }
                let separatorLength = Int(bytes[16]) | Int(bytes[17]) << 8
                guard bytes.count >= 18 + separatorLength else { throw Self.short }
                var block = Array(bytes.dropFirst(18 + separatorLength))
                if flags.contains(.repair) { Repair.trailingChecksum(&block) }
                try DecoderHooks.tableIndexPartition(
                    block, dataStart: Repair.load64(bytes, 0), dataEnd: Repair.load64(bytes, 8),
                    lastSeparator: Array(bytes[18..<18 + separatorLength]))
            case .tableFilter:
                if flags.contains(.repair) { Repair.trailingChecksum(&bytes) }
                try DecoderHooks.tableFilterBlock(bytes, probing: (0..<16).map { [UInt8(truncatingIfNeeded: $0 * 37)] })
            case .tableFooter:
                guard bytes.count >= 8 else { throw Self.short }
                var footer = Array(bytes.dropFirst(8))
                if flags.contains(.repair) { Repair.trailingChecksum(&footer) }
                try DecoderHooks.tableFooter(footer, fileSize: Repair.load64(bytes, 0))
            case .table:
                if flags.contains(.repair) { DecoderHooks.repairTable(&bytes) }
                try DecoderHooks.readTable(bytes)
            case .record: break  // above: its errors are the record layer's
            }
        } catch {
            // Rejected with a typed error: what the engine must do with damaged bytes.
            return false
        }
        return true
    }

    /// Runs the target on the bytes at `data` (the libFuzzer callback's arguments).
    public func run(_ data: UnsafePointer<UInt8>?, count: Int) {
        guard let data, count > 0 else { return }
        run(Array(UnsafeBufferPointer(start: data, count: count)))
    }

    // MARK: Targets

    /// An input too short (or too wrong) to lay out as the target's files.
    static let short = EngineError(.invalidArgument, "the input does not hold the target's files")

    static func write(_ bytes: [UInt8], to path: String, in fileSystem: FaultInjectingFileSystem) throws(EngineError) {
        let file = try fileSystem.openFile(path, create: true)
        if !bytes.isEmpty { try file.write(bytes, at: 0) }
    }

    /// A file of `bytes` in a fresh in-memory file system.
    static func file(_ bytes: [UInt8], at path: String) throws(EngineError) -> any StoreFile {
        let fileSystem = FaultInjectingFileSystem()
        try write(bytes, to: path, in: fileSystem)
        return try fileSystem.openFile(path, create: false)
    }

    /// The number in bytes 12..<20 of a segment, pack or hint header (1 when too short).
    static func headerNumber(_ bytes: [UInt8]) -> UInt64 {
        bytes.count >= 20 ? Repair.load64(bytes, 12) : 1
    }

    static func segment(_ bytes: inout [UInt8], _ flags: Flags) throws(EngineError) {
        if flags.contains(.repair) { Repair.segment(&bytes) }
        let number = headerNumber(bytes)
        let file = try file(bytes, at: "/store/" + StoreImage.hex16(number) + ".wal")
        try DecoderHooks.readSegment(file, number: number, isNewest: flags.contains(.newest))
    }

    static func pack(_ bytes: inout [UInt8], _ flags: Flags) throws(EngineError) {
        if flags.contains(.repair) { Repair.pack(&bytes) }
        let number = headerNumber(bytes)
        try DecoderHooks.scanPack(try file(bytes, at: "/store/" + StoreImage.hex16(number) + ".pack"), number: number)
    }

    static func packHint(_ bytes: inout [UInt8], _ flags: Flags) throws(EngineError) {
        guard bytes.count >= 8 else { throw Self.short }
        let packSize = Repair.load64(bytes, 0)
        var hint = Array(bytes.dropFirst(8))
        if flags.contains(.repair) { Repair.trailingChecksum(&hint) }
        let number = headerNumber(hint)
        let file = try file(hint, at: "/store/" + StoreImage.hex16(number) + ".hint")
        try DecoderHooks.loadPackHint(file, packNumber: number, packSize: packSize)
    }

    static func segmentHint(_ bytes: inout [UInt8], _ flags: Flags) throws(EngineError) -> Bool {
        guard bytes.count >= 4 else { return false }
        let hintLength = min(Int(Repair.load32(bytes, 0)), bytes.count - 4)
        var hint = Array(bytes[4..<4 + hintLength])
        var segment = Array(bytes[(4 + hintLength)...])
        if flags.contains(.repair) {
            Repair.segment(&segment)
            Repair.trailingChecksum(&hint)
        }
        let number = headerNumber(hint)
        let firstSequence: UInt64? = flags.contains(.anySequence) || hint.count < 44 ? nil : Repair.load64(hint, 36)
        let fileSystem = FaultInjectingFileSystem()
        let name = "/store/" + StoreImage.hex16(number)
        try write(hint, to: name + ".walhint", in: fileSystem)
        try write(segment, to: name + ".wal", in: fileSystem)
        return try DecoderHooks.loadSegmentHint(
            try fileSystem.openFile(name + ".walhint", create: false),
            segment: try fileSystem.openFile(name + ".wal", create: false),
            number: number, isNewest: flags.contains(.newest), firstSequence: firstSequence) != nil
    }

    static func blob(_ bytes: inout [UInt8], _ flags: Flags) throws(EngineError) {
        guard bytes.count >= 33 else { throw Self.short }
        var reference = Array(bytes[0..<33])
        var file = Array(bytes[33...])
        if flags.contains(.repair), file.count >= 44 {
            Repair.blob(&file, content: true)
            // The reference the log would hold for this file.
            reference.replaceSubrange(0..<8, with: file[16..<24])  // id
            reference.replaceSubrange(8..<16, with: file[24..<32])  // length
            var fileLength = [UInt8](repeating: 0, count: 8)
            Repair.store64(&fileLength, 0, UInt64(file.count))
            reference.replaceSubrange(16..<24, with: fileLength)
            reference.replaceSubrange(24..<32, with: file[32..<40])  // content checksum
            reference[32] = file[10]  // encoding
        }
        guard let decoded = DecoderHooks.blobReference(reference) else { throw Self.short }
        let fileSystem = FaultInjectingFileSystem()
        try write(file, to: "/store/blobs/" + StoreImage.hex16(decoded.id) + ".blob", in: fileSystem)
        try DecoderHooks.readBlob(referenceBytes: reference, directory: "/store/blobs", fileSystem: fileSystem)
    }
}
