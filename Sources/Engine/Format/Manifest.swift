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

    /// The encoded size: 36 bytes of header, 8 per pack, the crc32.
    var encodedSize: Int { 36 + 8 * packs.count + 4 }

    /// magic(8) version(2) flags(2) reserved(4) log start(8) last sequence(8) pack count(4),
    /// pack numbers (8 each), crc32 of everything before it (4).
    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: encodedSize)
        writer.append(contentsOf: LogFormat.manifestMagic)
        writer.append(LogFormat.formatVersion)
        writer.append(UInt16(0))
        writer.append(UInt32(0))
        writer.append(logStart)
        writer.append(lastSequence)
        writer.append(UInt32(packs.count))
        for pack in packs { writer.append(pack) }
        writer.append(checksum(writer.bytes[...]))
        return writer.bytes
    }

    /// Decodes and verifies a manifest. It is only ever renamed into place whole and synced, so
    /// any damage is corruption, never a torn write.
    init(decoding bytes: [UInt8], path: String) throws(EngineError) {
        guard bytes.count >= 40, checksum(bytes.dropLast(4)) == loadUInt32(bytes[...], at: bytes.count - 4) else {
            throw .corruption("manifest checksum mismatch (or the file is short)", path: path, offset: 0)
        }
        var reader = ByteReader(bytes.dropLast(4))
        guard reader.readBytes(8)!.elementsEqual(LogFormat.manifestMagic) else {
            throw EngineError(.unsupportedFormat, "not a WALStore manifest (bad magic)", path: path, offset: 0)
        }
        let version = reader.readUInt16()!
        guard version == LogFormat.formatVersion else {
            throw EngineError(.unsupportedFormat, "manifest format version \(version) is not supported", path: path, offset: 8)
        }
        guard reader.readUInt16()! == 0, reader.readUInt32()! == 0 else {
            throw EngineError(.unsupportedFormat, "manifest flags or reserved bytes are not zero", path: path, offset: 10)
        }
        logStart = reader.readUInt64()!
        lastSequence = reader.readUInt64()!
        let count = Int(reader.readUInt32()!)
        guard logStart >= 1, logStart < LogFormat.fileNumberLimit, reader.remaining == count * 8 else {
            throw .corruption("manifest declares \(count) packs in \(reader.remaining) bytes, log start \(logStart)", path: path, offset: 32)
        }
        // The next commits' sequences must exist.
        guard lastSequence < LogFormat.sequenceLimit else {
            throw .corruption("manifest's last sequence \(lastSequence) is past the limit", path: path, offset: 24)
        }
        packs = (0..<count).map { _ in reader.readUInt64()! }
        if let index = packs.firstIndex(where: { $0 >= LogFormat.fileNumberLimit }) {
            throw .corruption("manifest lists pack number \(packs[index])", path: path, offset: UInt64(36 + 8 * index))
        }
    }

    /// The state before any compaction: no packs, the log replayed from segment 1.
    init() {}

    init(logStart: UInt64, lastSequence: UInt64, packs: [UInt64]) {
        self.logStart = logStart
        self.lastSequence = lastSequence
        self.packs = packs
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
