import Engine

/// Checksum repairs. A fuzzer rarely guesses a crc32 or an XXH64, so most mutated inputs would
/// stop at the first checksum; with the repair bit of an input's first byte set, a target first
/// rewrites every checksum it can find in the bytes (walking the structure FORMAT.md describes
/// as far as the lengths allow), so that the checks behind the checksums are reached too.
enum Repair {
    static func load32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        var value: UInt32 = 0
        for i in 0..<4 { value |= UInt32(bytes[offset + i]) << (8 * i) }
        return value
    }

    static func load64(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<8 { value |= UInt64(bytes[offset + i]) << (8 * i) }
        return value
    }

    static func store32(_ bytes: inout [UInt8], _ offset: Int, _ value: UInt32) {
        for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * i)) }
    }

    static func store64(_ bytes: inout [UInt8], _ offset: Int, _ value: UInt64) {
        for i in 0..<8 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * i)) }
    }

    static func crc(_ bytes: [UInt8], _ range: Range<Int>, seed: UInt32 = 0) -> UInt32 {
        DecoderHooks.crc32(bytes[range], seed: seed)
    }

    /// A file whose last 4 bytes are the crc32 of the rest (hint files, segment hints, manifest).
    static func trailingChecksum(_ bytes: inout [UInt8]) {
        guard bytes.count >= 4 else { return }
        store32(&bytes, bytes.count - 4, crc(bytes, 0..<bytes.count - 4))
    }

    /// The blocks (16-byte header with a crc32 of header and stored bytes) laid end to end in
    /// `range`: a commit payload after its 8-byte header, or a pack after its file header.
    static func blocks(_ bytes: inout [UInt8], in range: Range<Int>) {
        var offset = range.lowerBound
        while offset + 16 <= range.upperBound {
            let stored = Int(load32(bytes, offset + 4))
            guard stored <= range.upperBound - offset - 16 else { return }
            let seed = crc(bytes, offset..<offset + 12)
            store32(&bytes, offset + 12, crc(bytes, offset + 16..<offset + 16 + stored, seed: seed))
            offset += 16 + stored
        }
    }

    /// A segment or pack file's 32-byte header (crc32 of bytes 0..<28 at 28).
    static func fileHeader(_ bytes: inout [UInt8]) {
        guard bytes.count >= 32 else { return }
        store32(&bytes, 28, crc(bytes, 0..<28))
    }

    /// A segment: its header, then each 32-byte-headed frame (its payload's blocks, its header crc
    /// and its frame crc) up to the first all-zero frame header (preallocated space, left as it is).
    static func segment(_ bytes: inout [UInt8]) {
        fileHeader(&bytes)
        var offset = 32
        while offset + 32 <= bytes.count, bytes[offset..<offset + 32].contains(where: { $0 != 0 }) {
            let length = Int(load32(bytes, offset + 8))
            guard length <= bytes.count - offset - 32 else {
                store32(&bytes, offset + 4, crc(bytes, offset + 8..<offset + 32))
                return
            }
            let payload = offset + 32..<offset + 32 + length
            if length >= 8 { blocks(&bytes, in: payload.lowerBound + 8..<payload.upperBound) }
            store32(&bytes, offset + 4, crc(bytes, offset + 8..<offset + 32))
            store32(&bytes, offset, crc(bytes, offset + 4..<payload.upperBound))
            offset = payload.upperBound
        }
    }

    /// A pack: its header, then its blocks.
    static func pack(_ bytes: inout [UInt8]) {
        fileHeader(&bytes)
        if bytes.count > 32 { blocks(&bytes, in: 32..<bytes.count) }
    }

    /// A blob file: each chunk's hash in the table (by the version its header names), the
    /// table's crc32, (with `content`) the content checksum in the header, and the header's
    /// crc32.
    static func blob(_ bytes: inout [UInt8], content: Bool) {
        let headerSize = 44
        let chunkSize: UInt64 = 1 << 20
        guard bytes.count >= headerSize + 4 else { return }
        let length = load64(bytes, 24)
        let version = UInt16(bytes[8]) | UInt16(bytes[9]) << 8
        let chunks = length / chunkSize + (length % chunkSize == 0 ? 0 : 1)
        if chunks <= UInt64(bytes.count - headerSize - 4) / 12 {
            let tableOffset = bytes.count - Int(chunks) * 12 - 4
            var offset = headerSize
            var remaining = length
            var hashes: [UInt64] = []
            for index in 0..<Int(chunks) {
                let entry = tableOffset + index * 12
                let stored = Int(load32(bytes, entry))
                let raw = Int(min(remaining, chunkSize))
                remaining -= UInt64(raw)
                guard stored <= tableOffset - offset else { break }
                let chunk = bytes[offset..<offset + stored]
                let hash = DecoderHooks.blobChunkHash(chunk, version: version)
                store64(&bytes, entry + 4, hash)
                if stored == raw {
                    hashes.append(hash)
                } else if let inflated = DecoderHooks.inflate(chunk, rawLength: raw) {
                    hashes.append(DecoderHooks.blobChunkHash(inflated[...], version: version))
                }
                offset += stored
            }
            store32(&bytes, bytes.count - 4, crc(bytes, tableOffset..<bytes.count - 4))
            if content { store64(&bytes, 32, DecoderHooks.contentChecksum(chunkHashes: hashes)) }
        }
        store32(&bytes, 40, crc(bytes, 0..<40))
    }
}
