/// Test hooks for crafting format bytes by hand (hostile frames, worked examples). Package access
/// only: not part of the public API.
package enum FormatTesting {
    package static let segmentHeaderSize = LogFormat.segmentHeaderSize
    package static let frameHeaderSize = LogFormat.frameHeaderSize
    package static let blockHeaderSize = LogFormat.blockHeaderSize

    /// zlib's crc32 of `bytes`.
    package static func crc32(_ bytes: [UInt8]) -> UInt32 { checksum(bytes[...]) }

    /// A frame with a correct checksum around any payload, with any header values.
    package static func frame(
        payload: [UInt8], sequence: UInt64, type: UInt8 = LogFormat.frameTypeCommit,
        declaredLength: UInt32? = nil, durableSequence: UInt64? = nil
    ) -> [UInt8] {
        frameHeader(
            type: type, declaredLength: declaredLength ?? UInt32(payload.count), sequence: sequence,
            durableSequence: durableSequence ?? (sequence &- 1), payloadChecksum: checksum(payload[...]), payloadLength: payload.count) + payload
    }

    /// A block with a correct checksum and any declared lengths.
    package static func block(encoding: UInt8, stored: [UInt8], rawLength: UInt32) -> [UInt8] {
        var writer = ByteWriter()
        writer.appendBlock(encoding: encoding, stored: stored, rawLength: rawLength)
        return writer.bytes
    }

    /// A commit payload header: record count and block count.
    package static func commitHeader(records: UInt32, blocks: UInt32) -> [UInt8] {
        var writer = ByteWriter()
        writer.append(records)
        writer.append(blocks)
        return writer.bytes
    }

    /// A segment's bytes with a byte of every commit frame's payload changed (its fifth), so that
    /// no commit of it passes its checks; the header and a close frame are left as they are.
    package static func damagingEveryCommit(of segment: [UInt8]) -> [UInt8] {
        var bytes = segment
        var offset = segmentHeaderSize
        while offset + frameHeaderSize <= bytes.count {
            let length = Int(loadUInt32(bytes[...], at: offset + 8))
            if bytes[offset + 20] == LogFormat.frameTypeCommit, length > 4 { bytes[offset + frameHeaderSize + 4] ^= 0x5A }
            offset += frameHeaderSize + length
        }
        return bytes
    }

    /// zlib-compresses `bytes` (level 6).
    package static func deflate(_ bytes: [UInt8]) -> [UInt8] { Zlib.compress(bytes[...], level: 6) ?? [] }
}
