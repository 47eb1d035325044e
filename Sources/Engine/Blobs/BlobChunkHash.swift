/// The hash of a blob's chunks, named by the blob file's version (FORMAT.md, "Blob files"):
/// XXH64 in version 3, XXH3-64 from version 4. A blob's content checksum is XXH64 of these
/// hashes in every version (``ContentDigest``).
enum BlobChunkHash: Sendable, Equatable {
    /// Version 3.
    case xxh64
    /// Version 4, which this build writes: about twice as fast to verify.
    case xxh3

    /// The hash of the blob files this build writes.
    static let current = BlobChunkHash.xxh3

    /// The hash of a blob file of `version`, or nil when this build does not read that version.
    init?(version: UInt16) {
        switch version {
        case 3: self = .xxh64
        case LogFormat.blobVersion: self = .xxh3
        default: return nil
        }
    }

    /// The blob file version whose chunks this hashes.
    var version: UInt16 {
        switch self {
        case .xxh64: 3
        case .xxh3: LogFormat.blobVersion
        }
    }

    /// The hash of `bytes`.
    func callAsFunction(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        switch self {
        case .xxh64: XXHash64.hash(bytes)
        case .xxh3: XXH3.hash(bytes)
        }
    }

    /// The hash of `bytes`.
    func callAsFunction(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.withUnsafeBytes { self($0) }
    }
}
