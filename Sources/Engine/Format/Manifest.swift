/// The manifest (FORMAT.md, "Manifest"): which pack files hold the compacted part of the store,
/// and from which segment the log is replayed on top of them. It is replaced whole, by writing a
/// temporary file, syncing it, renaming it over the old one and syncing the directory, so a
/// crash leaves either the old manifest or the new one.
struct Manifest: Sendable, Equatable {
    /// The first segment to replay; older segments were compacted into the packs.
    var logStart: UInt64 = 1
    /// The sequence number of the last commit the packs hold; the first frame of segment
    /// ``logStart`` has the next one.
    var lastSequence: UInt64 = 0
    /// The pack numbers, in the order they were written.
    var packs: [UInt64] = []
    /// Each pack's length in bytes, in the order of ``packs``: a pack of another length was cut
    /// short (or added to), even at a block boundary, and open refuses it as corruption.
    var packSizes: [UInt64] = []

    /// The encoded size: 36 bytes of header, 16 per pack, the crc32.
    var encodedSize: Int { 36 + 16 * packs.count + 4 }

    /// magic(8) version(2) flags(2) reserved(4) log start(8) last sequence(8) pack count(4),
    /// per pack its number and its length (8 + 8), crc32 of everything before it (4).
    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: encodedSize)
        writer.append(contentsOf: LogFormat.manifestMagic)
        writer.append(LogFormat.formatVersion)
        writer.append(UInt16(0))
        writer.append(UInt32(0))
        writer.append(logStart)
        writer.append(lastSequence)
        writer.append(UInt32(packs.count))
        for (pack, size) in zip(packs, packSizes) {
            writer.append(pack)
            writer.append(size)
        }
        writer.append(checksum(writer.bytes[...]))
        return writer.bytes
    }

    /// Decodes and verifies a manifest. It is only ever renamed into place whole and synced, so
    /// any damage is corruption, never a torn write.
    init(decoding bytes: [UInt8], path: String) throws(EngineError) {
        try LogFormat.checkMagic(bytes, LogFormat.manifestMagic, checksumAt: bytes.count - 4, of: "manifest", path: path)
        guard bytes.count >= 40, checksum(bytes.dropLast(4)) == loadUInt32(bytes[...], at: bytes.count - 4) else {
            throw .corruption("manifest checksum mismatch (or the file is short)", path: path, offset: 0)
        }
        var reader = ByteReader(bytes.dropLast(4))
        _ = reader.readBytes(8)
        try LogFormat.checkVersion(reader.readUInt16()!, of: "manifest", path: path)
        guard reader.readUInt16()! == 0, reader.readUInt32()! == 0 else {
            throw EngineError(.unsupportedFormat, "manifest flags or reserved bytes are not zero", path: path, offset: 10)
        }
        logStart = reader.readUInt64()!
        lastSequence = reader.readUInt64()!
        let count = Int(reader.readUInt32()!)
        guard (1...LogFormat.maxFileNumber).contains(logStart), lastSequence < LogFormat.maxSequence,
            reader.remaining == count * 16
        else {
            throw .corruption(
                "manifest declares \(count) packs in \(reader.remaining) bytes, log start \(logStart), last sequence \(lastSequence)",
                path: path, offset: 16)
        }
        for _ in 0..<count {
            packs.append(reader.readUInt64()!)
            packSizes.append(reader.readUInt64()!)
        }
        if let bad = packs.first(where: { !(1...LogFormat.maxFileNumber).contains($0) }) {
            throw .corruption("manifest names pack number \(bad), outside 1 ... \(LogFormat.maxFileNumber)", path: path, offset: 36)
        }
    }

    /// The state before any compaction: no packs, the log replayed from segment 1.
    init() {}

    /// A manifest naming `packs`, of `packSizes` bytes each (0 each when nil: tests' hand-made
    /// manifests).
    init(logStart: UInt64, lastSequence: UInt64, packs: [UInt64], packSizes: [UInt64]? = nil) {
        self.logStart = logStart
        self.lastSequence = lastSequence
        self.packs = packs
        self.packSizes = packSizes ?? packs.map { _ in 0 }
    }

    /// Reads the manifest in `directory`, whose entries are `names`; nil when there is none (no
    /// compaction has finished).
    static func read(in directory: String, names: [String], fileSystem: any FileSystem) throws(EngineError) -> Manifest? {
        let path = directory + "/" + LogFormat.manifestName
        guard names.contains(LogFormat.manifestName) else { return nil }
        let file = try fileSystem.openFile(path, create: false)
        let size = try file.size()
        guard size <= 1 << 30 else { throw .corruption("manifest is \(size) bytes", path: path, offset: 0) }
        return try Manifest(decoding: try file.read(at: 0, count: Int(size)), path: path)
    }
}
