/// The manifest (FORMAT.md, "Manifest"): which sorted tables hold the compacted part of the store,
/// and from which segment the log's tail is replayed on top of them. It is replaced whole, by
/// writing a temporary file, syncing it, renaming it over the old one and syncing the directory,
/// so a crash leaves either the old manifest or the new one.
struct Manifest: Sendable, Equatable {
    /// One table the manifest lists.
    struct Table: Sendable, Equatable {
        /// The table's number: its file is `<16 hex digits>.sst`.
        var number: UInt64
        /// Its level in the merge policy: 0 for a table written by a flush, L + 1 for a merge of
        /// level-L tables.
        var level: UInt32
        /// The file's exact length: a table of another length was cut short (or added to).
        var length: UInt64
        /// Entries in it, tombstones included.
        var entryCount: UInt64
        var smallestKey: [UInt8]
        var largestKey: [UInt8]
        /// The ids of the blobs its entries reference, ascending.
        var blobIDs: [UInt64]

        var encodedSize: Int { 8 + 4 + 8 + 8 + 2 + smallestKey.count + 2 + largestKey.count + 4 + 8 * blobIDs.count }
    }

    /// The first segment of the log's tail; older segments were flushed into the tables.
    var logStart: UInt64 = 1
    /// The sequence number of the last commit the tables hold; the first frame of segment
    /// ``logStart`` has the next one.
    var lastSequence: UInt64 = 0
    /// The tables, newest first: a key's entry in an earlier table hides its entries in later ones.
    var tables: [Table] = []
    /// Where the log ended at the last clean close that recorded it (a store with segment hints
    /// off records it, since no hint holds the newest segment's length): the segment and the end
    /// of its last commit frame, and that commit's sequence. Open refuses that segment shorter than
    /// this (corruption): those commits were durable. All 0 when none is recorded.
    var closedSegment: UInt64 = 0
    var closedLength: UInt64 = 0
    var closedSequence: UInt64 = 0

    /// The fewest bytes a table's entry takes (one-byte keys, no blob).
    static let smallestTableEntry = 8 + 4 + 8 + 8 + 2 + 1 + 2 + 1 + 4

    /// The encoded size: 52 bytes of header, each table's entry, the crc32.
    var encodedSize: Int { Self.headerSize + tables.reduce(0) { $0 + $1.encodedSize } + 4 }
    static let headerSize = 60

    /// magic(8) version(2) flags(2) reserved(4) log start(8) last sequence(8) closed segment(8)
    /// closed length(8) closed sequence(8) table count(4),
    /// per table (newest first) number(8) level(4) length(8) entry count(8) smallest key (u16
    /// length + bytes) largest key (u16 length + bytes) blob count(4) blob ids(8 each), crc32 of
    /// everything before it (4).
    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: encodedSize)
        writer.append(contentsOf: LogFormat.manifestMagic)
        writer.append(LogFormat.storeFormatVersion)
        writer.append(UInt16(0))
        writer.append(UInt32(0))
        writer.append(logStart)
        writer.append(lastSequence)
        writer.append(closedSegment)
        writer.append(closedLength)
        writer.append(closedSequence)
        writer.append(UInt32(tables.count))
        for table in tables {
            writer.append(table.number)
            writer.append(table.level)
            writer.append(table.length)
            writer.append(table.entryCount)
            writer.append(UInt16(table.smallestKey.count))
            writer.append(contentsOf: table.smallestKey)
            writer.append(UInt16(table.largestKey.count))
            writer.append(contentsOf: table.largestKey)
            writer.append(UInt32(table.blobIDs.count))
            for id in table.blobIDs { writer.append(id) }
        }
        writer.append(checksum(writer.bytes[...]))
        return writer.bytes
    }

    /// Decodes and verifies a format-4 manifest. It is only ever renamed into place whole and
    /// synced, so any damage is corruption, never a torn write. A checksummed manifest of format 3
    /// throws ``ManifestVersion3`` from ``read(in:names:fileSystem:)``; here it is
    /// ``EngineError/Code/unsupportedFormat``.
    init(decoding bytes: [UInt8], path: String) throws(EngineError) {
        let version = try Self.checkedVersion(bytes, path: path)
        guard version == LogFormat.storeFormatVersion else {
            throw Self.versionError(version, path: path)
        }
        var reader = ByteReader(bytes.dropLast(4))
        _ = reader.readBytes(10)
        // A flag this build does not know means a format it cannot read, as a version would.
        let flags = reader.readUInt16()!
        guard flags == 0 else {
            throw EngineError(
                .unsupportedFormat,
                "manifest flags are \(String(flags, radix: 16)) (hex), and this build knows none; open the store with the build that wrote it",
                path: path, offset: 10)
        }
        guard reader.readUInt32()! == 0 else {
            throw EngineError(.unsupportedFormat, "manifest reserved bytes are not zero", path: path, offset: 12)
        }
        guard reader.remaining >= Self.headerSize - 16 else {
            throw .corruption("manifest is shorter than its header", path: path, offset: 16)
        }
        logStart = reader.readUInt64()!
        lastSequence = reader.readUInt64()!
        closedSegment = reader.readUInt64()!
        closedLength = reader.readUInt64()!
        closedSequence = reader.readUInt64()!
        let count = Int(reader.readUInt32()!)
        guard (1...LogFormat.maxFileNumber).contains(logStart), lastSequence < LogFormat.maxSequence,
            closedSegment <= LogFormat.maxFileNumber, (closedSegment == 0) == (closedLength == 0),
            closedSequence < LogFormat.maxSequence, closedSegment != 0 || closedSequence == 0,
            count <= reader.remaining / Self.smallestTableEntry
        else {
            throw .corruption(
                "manifest declares \(count) tables in \(reader.remaining) bytes, log start \(logStart), last sequence \(lastSequence), closed segment \(closedSegment) of \(closedLength) bytes",
                path: path, offset: 16)
        }
        var numbers = Set<UInt64>()
        for index in 0..<count {
            let bad = { (what: String) in
                EngineError.corruption("manifest's table entry \(index) \(what)", path: path, offset: UInt64(Self.headerSize))
            }
            guard let number = reader.readUInt64(), let level = reader.readUInt32(), let length = reader.readUInt64(),
                let entryCount = reader.readUInt64(), let smallestLength = reader.readUInt16(),
                let smallest = reader.readBytes(Int(smallestLength)), let largestLength = reader.readUInt16(),
                let largest = reader.readBytes(Int(largestLength)), let blobCount = reader.readUInt32(),
                Int(blobCount) <= reader.remaining / 8
            else { throw bad("runs past the end of the manifest") }
            var blobIDs: [UInt64] = []
            blobIDs.reserveCapacity(Int(blobCount))
            for _ in 0..<blobCount { blobIDs.append(reader.readUInt64()!) }
            guard (1...LogFormat.maxFileNumber).contains(number), numbers.insert(number).inserted else {
                throw bad("names table number \(number), outside 1 ... \(LogFormat.maxFileNumber) or listed twice")
            }
            guard entryCount > 0, entryCount <= length, !smallest.isEmpty, !largest.isEmpty,
                compareSlices(smallest, largest) <= 0, length >= UInt64(TableFormat.footerSize)
            else { throw bad("has no entries (or more than its length in bytes), an empty key range or a length below a table footer's") }
            guard blobIDs.allSatisfy({ (1...LogFormat.maxFileNumber).contains($0) }),
                zip(blobIDs, blobIDs.dropFirst()).allSatisfy({ $0 < $1 })
            else { throw bad("lists blob ids that are not ascending within 1 ... \(LogFormat.maxFileNumber)") }
            tables.append(
                Table(
                    number: number, level: level, length: length, entryCount: entryCount, smallestKey: Array(smallest),
                    largestKey: Array(largest), blobIDs: blobIDs))
        }
        guard reader.isAtEnd else {
            throw .corruption("manifest holds \(reader.remaining) bytes after its last table", path: path, offset: UInt64(Self.headerSize))
        }
    }

    /// The state before any flush: no tables, the log replayed from segment 1.
    init() {}

    init(logStart: UInt64, lastSequence: UInt64, tables: [Table]) {
        self.logStart = logStart
        self.lastSequence = lastSequence
        self.tables = tables
    }

    /// This manifest with the recorded log end kept only if its segment is still part of the log
    /// from `logStart` on.
    func keepingClosedEnd(from other: Manifest) -> Manifest {
        var copy = self
        if other.closedSegment >= logStart {
            copy.closedSegment = other.closedSegment
            copy.closedLength = other.closedLength
            copy.closedSequence = other.closedSequence
        }
        return copy
    }

    /// The magic, checksum and version checks every manifest passes, in that order (FORMAT.md,
    /// "Version rules"); returns the version.
    static func checkedVersion(_ bytes: [UInt8], path: String) throws(EngineError) -> UInt16 {
        try LogFormat.checkMagic(bytes, LogFormat.manifestMagic, checksumAt: bytes.count - 4, of: "manifest", path: path)
        guard bytes.count >= 40, checksum(bytes.dropLast(4)) == loadUInt32(bytes[...], at: bytes.count - 4) else {
            throw .corruption("manifest checksum mismatch (or the file is short)", path: path, offset: 0)
        }
        return loadUInt16(bytes[...], at: 8)
    }

    static func versionError(_ version: UInt16, path: String) -> EngineError {
        EngineError(
            .unsupportedFormat,
            "manifest format version \(version) is not supported (this build reads \(LogFormat.storeFormatVersion), and upgrades \(LogFormat.formatVersion) at open); open the store with the build that wrote it",
            path: path, offset: 8)
    }

    /// What `directory`'s `MANIFEST` holds.
    enum Stored {
        case none
        case current(Manifest)
        /// A format-3 manifest (packs), which open upgrades (``RecoveredLog``'s upgrade).
        case version3(ManifestV3)
    }

    /// Reads the manifest in `directory`, whose entries are `names`.
    static func read(in directory: String, names: [String], fileSystem: any FileSystem) throws(EngineError) -> Stored {
        let path = directory + "/" + LogFormat.manifestName
        guard names.contains(LogFormat.manifestName) else { return .none }
        let file = try fileSystem.openFile(path, create: false)
        let size = try file.size()
        guard size <= 1 << 30 else { throw .corruption("manifest is \(size) bytes", path: path, offset: 0) }
        let bytes = try file.read(at: 0, count: Int(size))
        let version = try checkedVersion(bytes, path: path)
        if version == LogFormat.formatVersion { return .version3(try ManifestV3(decoding: bytes, path: path)) }
        return .current(try Manifest(decoding: bytes, path: path))
    }
}
