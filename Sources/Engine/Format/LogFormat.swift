/// The constants of the on-disk format. `FORMAT.md` at the repository root specifies every byte;
/// this file only names the numbers. Change both together.
enum LogFormat {
    // MARK: Segment files

    /// Segment file names: 16 lower-case hex digits of the segment number, then this suffix.
    static let segmentSuffix = ".wal"
    /// The lock file in the store directory.
    static let lockFileName = "LOCK"

    /// "WALSTORE" in ASCII: bytes 0..<8 of every segment file.
    static let segmentMagic: [UInt8] = Array("WALSTORE".utf8)
    /// The only format version this build reads and writes.
    static let formatVersion: UInt16 = 1
    /// magic(8) version(2) flags(2) segment number(8) crc32(4).
    static let segmentHeaderSize = 24

    // MARK: Frames

    /// frame crc32(4) header crc32(4) length(4) sequence(8) type(1) flags(1) reserved(2).
    static let frameHeaderSize = 24
    /// A frame holding one committed batch. Type 0 is never valid, so zero-filled space never
    /// parses as a frame.
    static let frameTypeCommit: UInt8 = 1
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
}
