/// The constants of the on-disk format. `FORMAT.md` at the repository root specifies every byte;
/// this file only names the numbers. Change both together.
enum LogFormat {
    // MARK: Segment files

    /// Segment file names: 16 lower-case hex digits of the segment number, then this suffix.
    static let segmentSuffix = ".wal"
    /// Segment, pack and blob numbers run from 1 to this (2^48). A name with 16 hex digits outside
    /// that range is not one the engine writes: open ignores such a file like any other foreign
    /// file, and never derives a number from it (so no arithmetic on it can overflow).
    static let maxFileNumber: UInt64 = 1 << 48
    /// Commit sequence numbers run from 1 to this (2^62); a sequence read from disk above it is
    /// corruption, so `sequence + 1` never overflows.
    static let maxSequence: UInt64 = 1 << 62
    /// The lock file in the store directory.
    static let lockFileName = "LOCK"

    /// "WALSTORE" in ASCII: bytes 0..<8 of every segment file.
    static let segmentMagic: [UInt8] = Array("WALSTORE".utf8)
    /// The version of segment, segment hint (and format-3 pack, hint and manifest) files: their
    /// bytes are the same in store formats 3 and 4, so segments and their hints keep writing 3.
    static let formatVersion: UInt16 = 3
    /// The store's format version, the manifest's (FORMAT.md, "Version rules"): 4, the tail and
    /// sorted tables. A format-3 manifest (packs) is upgraded at open.
    static let storeFormatVersion: UInt16 = 4
    /// Table files: 16 hex digits of the table number, then this suffix.
    static let tableSuffix = ".sst"

    /// The version rule (FORMAT.md, "Version rules") for a header whose checksum has passed:
    /// another format version is ``EngineError/Code/unsupportedFormat`` (a newer build's file:
    /// nothing is changed), never corruption. `kind` names the file in the message.
    static func checkVersion(_ version: UInt16, of kind: String, path: String) throws(EngineError) {
        guard version == formatVersion else {
            throw EngineError(
                .unsupportedFormat,
                "\(kind) format version \(version) is not supported (this build reads \(formatVersion)); open the store with the build that wrote it",
                path: path, offset: 8)
        }
    }

    /// The magic check that comes before any checksum, so that a file that is not one of ours is
    /// reported as such (``EngineError/Code/unsupportedFormat``) rather than as damage. A header
    /// whose checksum (of `bytes[0..<checksumAt]`, stored at `checksumAt`) passes once our magic
    /// is put back is one of ours with damaged magic: that is left to the checksum check, which
    /// reports corruption.
    static func checkMagic(
        _ bytes: [UInt8], _ magic: [UInt8], checksumAt: Int, of kind: String, path: String
    ) throws(EngineError) {
        guard !bytes.prefix(8).elementsEqual(magic) else { return }
        if bytes.count >= checksumAt + 4, checksumAt >= 8 {
            let repaired = magic + bytes[8..<checksumAt]
            if checksum(repaired[...]) == loadUInt32(bytes[...], at: checksumAt) { return }
        }
        throw EngineError(
            .unsupportedFormat,
            "not a WALStore \(kind) (its first bytes are not \(String(decoding: magic, as: UTF8.self))); move the file out of the store directory",
            path: path, offset: 0)
    }
    /// magic(8) version(2) flags(2) number(8) first sequence(8) crc32(4): segments and packs
    /// (a pack's first-sequence field is reserved, 0).
    static let segmentHeaderSize = 32
    /// Where the segment (and pack) header's crc32 of the bytes before it sits.
    static let segmentHeaderChecksumOffset = 28

    // MARK: Frames

    /// frame crc32(4) header crc32(4) length(4) sequence(8) type(1) flags(1) reserved(2)
    /// durable sequence(8).
    static let frameHeaderSize = 32
    /// A frame holding one committed batch. Type 0 is never valid, so zero-filled space never
    /// parses as a frame.
    static let frameTypeCommit: UInt8 = 1
    /// The frame a clean close appends, with no payload: proof that every commit before it was
    /// durable, so damage to them is corruption and never taken for a torn write.
    static let frameTypeClose: UInt8 = 2
    /// The largest payload a frame may declare (1 GiB); larger is corruption.
    static let maxFramePayload = 1 << 30

    // MARK: Blocks (inside a commit payload)

    /// record count(4) block count(4), then the blocks.
    static let commitPayloadHeaderSize = 8
    /// encoding(1) reserved(3) stored length(4) raw length(4) crc32(4).
    static let blockHeaderSize = 16
    static let blockEncodingRaw: UInt8 = 0
    static let blockEncodingZlib: UInt8 = 1
    /// deflate cannot expand data more than 1032:1; a block that declares more is corruption and
    /// nothing is allocated for it.
    static let maxInflateRatio = 1032

    // MARK: Records (inside a block's raw bytes)

    static let recordPut: UInt8 = 1
    static let recordDelete: UInt8 = 2
    /// Keys are 1 to 65,535 bytes.
    static let maxKeyLength = 65_535
    /// Values are 0 to 256 MiB.
    static let maxValueLength = 256 << 20
    /// The largest raw length a block may declare: one maximal record (value, key and lengths)
    /// after less than a block size (64 KiB at most) of other records fits well inside this.
    static let maxBlockRawLength = maxValueLength + (1 << 20)

    /// A put whose value lives in a blob file: kind, key length, key, then a blob reference.
    static let recordBlob: UInt8 = 3

    // MARK: Blobs (FORMAT.md, "Blob files")

    /// The directory, inside the store, that holds blob files.
    static let blobDirectoryName = "blobs"
    /// Blob file names: 16 lower-case hex digits of the blob's id, then this suffix.
    static let blobSuffix = ".blob"
    /// A blob being written by builds before blob version 4 (renamed into place once synced);
    /// never referenced, removed on open. This build writes blobs under their final name.
    static let blobTemporarySuffix = ".blob-tmp"
    /// The blob file version this build writes: 4, chunks hashed with XXH3-64. It reads 3 (XXH64)
    /// and 4; any other version is ``EngineError/Code/unsupportedFormat`` (FORMAT.md, "Blob
    /// files").
    static let blobVersion: UInt16 = 4
    /// "WALSBLOB": bytes 0..<8 of every blob file.
    static let blobMagic: [UInt8] = Array("WALSBLOB".utf8)
    /// magic(8) version(2) encoding(1) reserved(1) chunk size(4) id(8) length(8) content
    /// checksum(8) header crc32(4).
    static let blobHeaderSize = 44
    /// Every chunk but the last holds this many content bytes.
    static let blobChunkSize = 1 << 20
    /// stored length(4) hash of the stored bytes(8), one per chunk, after the chunks.
    static let blobChunkEntrySize = 12
    static let blobEncodingRaw: UInt8 = 0
    static let blobEncodingZlib: UInt8 = 1
    /// id(8) length(8) file length(8) content checksum(8) encoding(1).
    static let blobReferenceSize = 33
    /// The largest blob: 1 TiB.
    static let maxBlobLength: UInt64 = 1 << 40
    /// The prefix of a payload that is test-compressed to choose a blob's encoding, and the
    /// fraction of it compression must save for the blob to be stored compressed.
    static let blobSampleSize = 8 << 10
    static let blobMinimumSaving = 0.1

    // MARK: Compaction (FORMAT.md, "Pack files", "Hint files", "Manifest")

    /// Pack files (compacted segments): 16 hex digits of the pack number, then this suffix.
    static let packSuffix = ".pack"
    /// A pack's hint file sits beside it with this suffix.
    static let hintSuffix = ".hint"
    /// A pack or hint file being written; removed on open.
    static let temporarySuffix = "-tmp"
    /// "WALSPACK": bytes 0..<8 of every pack file; the header is laid out as a segment's.
    static let packMagic: [UInt8] = Array("WALSPACK".utf8)
    /// "WALSHINT": bytes 0..<8 of every hint file.
    static let hintMagic: [UInt8] = Array("WALSHINT".utf8)
    /// magic(8) version(2) flags(2) pack number(8) entry count(8) reserved(4).
    static let hintHeaderSize = 32
    /// A sealed segment's hint file sits beside it with this suffix (`<n>.walhint`).
    static let segmentHintSuffix = ".walhint"
    /// "WALSSEGH": bytes 0..<8 of every segment hint file.
    static let segmentHintMagic: [UInt8] = Array("WALSSEGH".utf8)
    /// magic(8) version(2) flags(2) segment number(8) covered length(8) last frame offset(8)
    /// first sequence(8) frame count(8) record bytes(8) entry count(8) reserved(4).
    static let segmentHintHeaderSize = 72
    /// The manifest's file name, and the name it is written under before the rename.
    static let manifestName = "MANIFEST"
    static let manifestTemporaryName = "MANIFEST-tmp"
    /// "WALSMANI": bytes 0..<8 of the manifest.
    static let manifestMagic: [UInt8] = Array("WALSMANI".utf8)
    /// In the index and the open-file table, pack numbers carry this bit so that they never
    /// collide with segment numbers. It never appears on disk.
    static let packFileBit: UInt64 = 1 << 63
}
