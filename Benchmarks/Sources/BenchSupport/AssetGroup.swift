#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the bytes of an `assets` blob look like.
public enum AssetContent: String, CaseIterable, Sendable {
    /// SplitMix64 output: incompressible, like photos, video or archives. WALStore stores such a
    /// blob raw (a compressed first 64 KiB would not save 10%), so reads can map it.
    case random
    /// JSON-like user records (``ValueGenerator``'s) laid end to end: zlib level 1 shrinks them
    /// about 2x, like documents, logs or exports. WALStore stores such a blob compressed.
    case json
}

/// One group of `assets` blobs: `count` blobs of `bytes` bytes of one ``AssetContent``, each
/// written in its own durable commit, then read back streamed and mapped from the page cache, and
/// streamed from the disk.
///
/// A blob's bytes are made again whenever they are needed, from the group and the blob's number,
/// so only the blob in hand is in memory and every contender stores exactly the same bytes.
public struct AssetGroup: Sendable {
    public let content: AssetContent
    public let bytes: Int
    public let count: Int

    /// How a group's blobs are timed: one table row each.
    public enum Step: String, CaseIterable, Sendable {
        /// One durable commit (WALStore) or one durable file (plain files) per blob.
        case write
        /// Read back in chunks of at most 1 MiB, never whole.
        case stream
        /// Read back mapped (`mmap`) where the bytes are stored raw.
        case map
        /// As `stream`, with the OS page cache dropped before each blob (not timed): the read a
        /// blob gets when it is not in memory, as the first display of a photo after a reboot.
        case streamCold = "stream-cold"
    }

    /// Every group of a run: each size of `sizes`, smallest first, random then JSON.
    public static func all(_ sizes: WorkloadSizes) -> [AssetGroup] {
        sizes.assetClasses.flatMap { size in
            AssetContent.allCases.map { AssetGroup(content: $0, bytes: size.bytes, count: size.count) }
        }
    }

    /// `1 MiB random`.
    public var label: String {
        let size = bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : "\(bytes) B"
        return "\(size) \(content.rawValue)"
    }

    /// The table part of `step` on this group: `1 MiB random write`.
    public func part(_ step: Step) -> String {
        "\(label) \(step.rawValue)"
    }

    /// The bytes of all the group's blobs.
    public var totalBytes: Int { bytes * count }

    /// The key (or file name) of blob `index`: `asset-random-1048576-0003`.
    public func name(_ index: Int) -> String {
        let number = String(index)
        return "asset-\(content.rawValue)-\(bytes)-" + String(repeating: "0", count: max(0, 4 - number.count)) + number
    }

    /// ``name(_:)`` as key bytes.
    public func key(_ index: Int) -> [UInt8] {
        Array(name(index).utf8)
    }

    /// The content of blob `index`.
    public func blob(_ index: Int) -> [UInt8] {
        switch content {
        case .random:
            var rng = SplitMix64(seed: 0xA55E_7000_0000_0000 ^ UInt64(bytes) << 16 ^ UInt64(index))
            return [UInt8](unsafeUninitializedCapacity: bytes) { buffer, initialized in
                let raw = UnsafeMutableRawBufferPointer(buffer)
                var offset = 0
                while offset + 8 <= bytes {
                    raw.storeBytes(of: rng.next().littleEndian, toByteOffset: offset, as: UInt64.self)
                    offset += 8
                }
                var last = rng.next()
                while offset < bytes {
                    raw[offset] = UInt8(truncatingIfNeeded: last)
                    last >>= 8
                    offset += 1
                }
                initialized = bytes
            }
        case .json:
            // Blobs start at different places of the text, so no two are alike; the text repeats
            // every 4 MiB, far beyond zlib's 32 KiB window and WALStore's 1 MiB chunks.
            let text = Self.jsonText
            var start = (index &* 1_000_003 &+ bytes / 7) % text.count
            var result: [UInt8] = []
            result.reserveCapacity(bytes)
            while result.count < bytes {
                let take = min(bytes - result.count, text.count - start)
                result.append(contentsOf: text[start..<(start + take)])
                start = 0
            }
            return result
        }
    }

    /// True when `actual` holds the bytes of `expected` from `offset` on (`memcmp`).
    public static func matches(_ actual: UnsafeRawBufferPointer, _ expected: [UInt8], at offset: Int) -> Bool {
        guard offset >= 0, actual.count <= expected.count - offset else { return false }
        guard let base = actual.baseAddress, actual.count > 0 else { return true }
        return expected.withUnsafeBytes { memcmp(base, $0.baseAddress! + offset, actual.count) == 0 }
    }

    /// 4 MiB of ``ValueGenerator`` records, end to end, from a seed of their own.
    private static let jsonText: [UInt8] = {
        var rng = SplitMix64(seed: 0x15_0A55E7)
        var text: [UInt8] = []
        text.reserveCapacity((4 << 20) + ValueGenerator.maximumLength)
        while text.count < 4 << 20 {
            text.append(contentsOf: ValueGenerator.value(using: &rng))
            text.append(UInt8(ascii: "\n"))
        }
        return text
    }()
}
