/// A format-3 manifest (FORMAT.md, "Upgrading a format-3 store"): packs and their lengths. Read
/// only to upgrade such a store at open.
struct ManifestV3: Sendable, Equatable {
    var logStart: UInt64 = 1
    var lastSequence: UInt64 = 0
    var packs: [UInt64] = []
    var packSizes: [UInt64] = []

    /// As format 3 encoded it (for tests that make format-3 stores).
    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 40 + 16 * packs.count)
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

    init(logStart: UInt64, lastSequence: UInt64, packs: [UInt64], packSizes: [UInt64]) {
        self.logStart = logStart
        self.lastSequence = lastSequence
        self.packs = packs
        self.packSizes = packSizes
    }

    init(decoding bytes: [UInt8], path: String) throws(EngineError) {
        var reader = ByteReader(bytes.dropLast(4))
        _ = reader.readBytes(10)
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
}
