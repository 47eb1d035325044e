/// Naming and creating segment files.
enum SegmentFile {
    /// `0000000000000001.wal`: 16 lower-case hex digits of the number.
    static func name(_ number: UInt64) -> String { hex16(number) + LogFormat.segmentSuffix }

    /// The segment number a file name encodes, or nil for any other file.
    static func number(fromName name: String) -> UInt64? {
        guard name.count == 16 + LogFormat.segmentSuffix.count, name.hasSuffix(LogFormat.segmentSuffix) else { return nil }
        return parseFileNumber(name.prefix(16))
    }

    /// The 32-byte segment header (FORMAT.md, "Segment header") of segment `number`, whose first
    /// frame will carry `firstSequence`.
    static func header(number: UInt64, firstSequence: UInt64) -> [UInt8] {
        header(magic: LogFormat.segmentMagic, number: number, firstSequence: firstSequence)
    }

    /// The 32-byte header of segments and packs: magic(8) version(2) flags(2) number(8) first
    /// sequence(8, 0 in a pack) crc32(4).
    static func header(magic: [UInt8], number: UInt64, firstSequence: UInt64) -> [UInt8] {
        var writer = ByteWriter(capacity: LogFormat.segmentHeaderSize)
        writer.append(contentsOf: magic)
        writer.append(LogFormat.formatVersion)
        writer.append(UInt16(0))
        writer.append(number)
        writer.append(firstSequence)
        writer.append(checksum(writer.bytes[...]))
        return writer.bytes
    }

    /// Checks a 32-byte segment or pack header (`magic` says which) against FORMAT.md, in the
    /// version rule's order: the magic (not ours: ``EngineError/Code/unsupportedFormat``), the
    /// crc32 (corruption), the format version (``EngineError/Code/unsupportedFormat``), then the
    /// flags and the number the file is named for. Returns the first-sequence field (a segment's
    /// first frame's sequence; 0 in a pack), below 2^62 or the header is corruption.
    @discardableResult
    static func checkHeader(
        _ header: [UInt8], magic: [UInt8], kind: String, number: UInt64, path: String
    ) throws(EngineError) -> UInt64 {
        let crcAt = LogFormat.segmentHeaderChecksumOffset
        guard header.count == LogFormat.segmentHeaderSize else {
            throw .corruption("\(kind) header is short (\(header.count) bytes)", path: path, offset: 0)
        }
        try LogFormat.checkMagic(header, magic, checksumAt: crcAt, of: kind, path: path)
        guard checksum(header[0..<crcAt]) == loadUInt32(header[...], at: crcAt) else {
            throw .corruption("\(kind) header checksum mismatch", path: path, offset: 0)
        }
        try LogFormat.checkVersion(loadUInt16(header[...], at: 8), of: kind, path: path)
        guard loadUInt16(header[...], at: 10) == 0 else {
            throw EngineError(.unsupportedFormat, "\(kind) header flags are not known to this build", path: path, offset: 10)
        }
        var reader = ByteReader(header[12..<crcAt])
        let named = reader.readUInt64()!
        guard named == number else {
            throw .corruption("\(kind) header says number \(named) but the file is named for \(number)", path: path, offset: 12)
        }
        let firstSequence = reader.readUInt64()!
        guard firstSequence < LogFormat.maxSequence else {
            throw .corruption("\(kind) header's first sequence \(firstSequence) is out of range", path: path, offset: 20)
        }
        return firstSequence
    }

    /// Reads and checks the header of segment `number` (``checkHeader(_:magic:kind:number:path:)``)
    /// and returns the sequence its first frame carries.
    @discardableResult
    static func checkHeader(of file: any StoreFile, number: UInt64) throws(EngineError) -> UInt64 {
        let header = try file.read(at: 0, count: LogFormat.segmentHeaderSize)
        return try checkHeader(header, magic: LogFormat.segmentMagic, kind: "segment", number: number, path: file.path)
    }

    /// Creates (or re-creates, empty) segment `number` holding only its header, its first frame
    /// to carry `firstSequence`. Nothing is durable yet: call ``makeDurable(_:in:fileSystem:)``
    /// before appending a frame.
    static func start(
        number: UInt64, firstSequence: UInt64, in directory: String, fileSystem: any FileSystem
    ) throws(EngineError) -> any StoreFile {
        let file = try fileSystem.openFile(directory + "/" + name(number), create: true)
        try file.truncate(to: 0)
        try file.write(header(number: number, firstSequence: firstSequence), at: 0)
        return file
    }

    /// Syncs a new segment and its directory entry, so a frame is never appended to a segment
    /// that could vanish in a power loss.
    static func makeDurable(_ file: any StoreFile, in directory: String, fileSystem: any FileSystem) throws(EngineError) {
        try file.sync()
        try fileSystem.syncDirectory(directory)
    }

    /// ``start(number:firstSequence:in:fileSystem:)`` then ``makeDurable(_:in:fileSystem:)``.
    static func create(
        number: UInt64, firstSequence: UInt64, in directory: String, fileSystem: any FileSystem
    ) throws(EngineError) -> any StoreFile {
        let file = try start(number: number, firstSequence: firstSequence, in: directory, fileSystem: fileSystem)
        try makeDurable(file, in: directory, fileSystem: fileSystem)
        return file
    }
}
