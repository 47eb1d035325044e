/// Sorted-table files (FORMAT.md, "Table files"): the file kind format 4 introduces, an
/// immutable run of key-ordered entries read on demand. Data blocks of prefix-compressed
/// entries, then the metadata, then a fixed-size footer at the end. Version 5 (written) splits
/// the metadata into partitions: per run of data blocks an index partition (separators and
/// handles) and a Bloom filter partition of the same blocks' keys, and a small top-level index
/// naming each partition. Version 4 (read only) has one whole-table filter block and one index
/// block.
enum TableFormat {
    /// The footer's magic, ASCII `WALSTABL`.
    static let magic: [UInt8] = Array("WALSTABL".utf8)
    /// The table format version this build writes: partitioned filter and index.
    static let version: UInt16 = 5
    /// The previous table format version, still read: one filter block and one index block.
    static let unpartitionedVersion: UInt16 = 4
    /// The footer's size in bytes.
    static let footerSize = 60
    /// A stored block's trailer: the type byte and a crc32.
    static let trailerSize = 5
    static let blockTypeRaw: UInt8 = 0
    static let blockTypeZlib: UInt8 = 1

    /// Entry kinds, the first byte of a data entry's value.
    static let kindValue: UInt8 = 1
    static let kindTombstone: UInt8 = 2
    static let kindBlob: UInt8 = 3

    /// The most hash probes a filter may declare.
    static let maxFilterProbes = 30
    /// The fewest bits a filter holds (an empty table's filter too).
    static let minFilterBits = 64

    /// The longest stored block a handle may name: the largest raw contents, a compressed
    /// block's length prefix and the trailer.
    static let maxStoredBlockLength = UInt64(LogFormat.maxBlockRawLength + 4 + trailerSize)

    /// The file name of table `number`.
    static func name(_ number: UInt64) -> String { hex16(number) + ".sst" }

    /// What a table's partitions scratch file adds to the table's name, before the temporary
    /// suffix: `<n>.sst-partitions-tmp` holds the partitions of table `n` while its data is
    /// written (``TableWriter``). Its name ends in ``LogFormat/temporarySuffix`` and encodes the
    /// table's number, so open removes it as it does a temporary table.
    static let scratchInfix = "-partitions"

    /// The file name of the partitions scratch file of table `number`.
    static func scratchName(_ number: UInt64) -> String { name(number) + scratchInfix + LogFormat.temporarySuffix }
}

/// Where a stored block lies in a table file: its offset and its length, trailer included.
struct BlockHandle: Sendable, Equatable, Hashable {
    var offset: UInt64
    var length: UInt64

    func append(to writer: inout ByteWriter) {
        writer.appendVarint64(offset)
        writer.appendVarint64(length)
    }

    static func read(from reader: inout ByteReader) -> BlockHandle? {
        guard let offset = reader.readVarint64(), let length = reader.readVarint64() else { return nil }
        return BlockHandle(offset: offset, length: length)
    }

    /// A handle decoded in place from `bytes` at `position` (moved past it); nil when a varint
    /// runs past the end or over 64 bits. Allocates nothing.
    @inline(__always)
    static func read(_ bytes: UnsafeRawBufferPointer, at position: inout Int) -> BlockHandle? {
        guard let offset = readVarint64(bytes, at: &position), let length = readVarint64(bytes, at: &position) else { return nil }
        return BlockHandle(offset: offset, length: length)
    }

    /// A LEB128 varint of at most ten bytes, in place (as ``ByteReader/readVarint64()``).
    @inline(__always)
    static func readVarint64(_ bytes: UnsafeRawBufferPointer, at position: inout Int) -> UInt64? {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while shift <= 63, position < bytes.count {
            let byte = bytes[position]
            position += 1
            let bits = UInt64(byte & 0x7F)
            guard shift < 63 || bits <= 1 else { return nil }
            result |= bits << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
        return nil
    }

    /// The offset just past the block.
    var end: UInt64 { offset + length }
}

/// One entry of a table: a key, the sequence number of the commit that wrote it, and what it
/// holds: what a pack record or a log record can be (a value, a blob's reference, or a delete).
struct TableEntry: Sendable, Equatable {
    enum Value: Sendable, Equatable {
        case value([UInt8])
        case tombstone
        case blob(BlobReference)
    }

    var key: [UInt8]
    var sequence: UInt64
    var value: Value

    /// The bytes a data block stores as the entry's value: kind, sequence, then the value or
    /// the reference.
    func encodedValue() -> [UInt8] {
        var writer = ByteWriter()
        switch value {
        case .value(let bytes):
            writer.append(TableFormat.kindValue)
            writer.appendVarint64(sequence)
            writer.append(contentsOf: bytes)
        case .tombstone:
            writer.append(TableFormat.kindTombstone)
            writer.appendVarint64(sequence)
        case .blob(let reference):
            writer.append(TableFormat.kindBlob)
            writer.appendVarint64(sequence)
            reference.append(to: &writer)
        }
        return writer.bytes
    }

    /// Decodes an entry's value bytes; nil when they are not a well-formed value.
    static func decode(key: [UInt8], value bytes: ArraySlice<UInt8>) -> TableEntry? {
        var reader = ByteReader(bytes)
        guard let kind = reader.readUInt8(), let sequence = reader.readVarint64(), sequence < LogFormat.maxSequence
        else { return nil }
        switch kind {
        case TableFormat.kindValue:
            return TableEntry(key: key, sequence: sequence, value: .value(Array(bytes[reader.position...])))
        case TableFormat.kindTombstone:
            guard reader.isAtEnd else { return nil }
            return TableEntry(key: key, sequence: sequence, value: .tombstone)
        case TableFormat.kindBlob:
            guard let reference = BlobReference.read(from: &reader), reader.isAtEnd else { return nil }
            return TableEntry(key: key, sequence: sequence, value: .blob(reference))
        default:
            return nil
        }
    }
}

/// A block as stored in a table file: its contents (raw, or a `u32` raw length and a zlib
/// stream), a type byte, and a crc32 of both.
enum StoredBlock {
    /// Stores `raw`, deflated at `level` when that saves at least an eighth (level 0: never).
    static func encode(_ raw: [UInt8], level: Int) -> [UInt8] {
        var out: [UInt8]
        let type: UInt8
        if level > 0, raw.count >= 64, let deflated = Zlib.compress(raw[...], level: level),
            deflated.count + 4 <= raw.count - raw.count / 8
        {
            var writer = ByteWriter(capacity: deflated.count + 4 + TableFormat.trailerSize)
            writer.append(UInt32(raw.count))
            writer.append(contentsOf: deflated)
            out = writer.bytes
            type = TableFormat.blockTypeZlib
        } else {
            out = raw
            type = TableFormat.blockTypeRaw
        }
        out.append(type)
        let crc = checksum(out[...])
        withUnsafeBytes(of: crc.littleEndian) { out.append(contentsOf: $0) }
        return out
    }

    /// The raw contents of the stored block `stored`, read from `offset` of the table at `path`,
    /// once its crc32, type and lengths check out.
    static func decode(_ stored: ArraySlice<UInt8>, path: String, offset: UInt64) throws(EngineError) -> [UInt8] {
        guard stored.count >= TableFormat.trailerSize else {
            throw .corruption("table block of \(stored.count) bytes is shorter than its trailer", path: path, offset: offset)
        }
        let typeIndex = stored.endIndex - 5
        let expected = loadUInt32(stored, at: typeIndex + 1)
        guard checksum(stored[stored.startIndex...typeIndex]) == expected else {
            throw .corruption("table block fails its crc32", path: path, offset: offset)
        }
        let payload = stored[stored.startIndex..<typeIndex]
        switch stored[typeIndex] {
        case TableFormat.blockTypeRaw:
            return Array(payload)
        case TableFormat.blockTypeZlib:
            guard payload.count >= 4 else {
                throw .corruption("compressed table block has no raw length", path: path, offset: offset)
            }
            let rawLength = Int(loadUInt32(payload, at: payload.startIndex))
            let deflated = payload.dropFirst(4)
            guard rawLength >= 1, rawLength <= LogFormat.maxBlockRawLength,
                rawLength <= deflated.count * LogFormat.maxInflateRatio
            else {
                throw .corruption("compressed table block declares \(rawLength) raw bytes from \(deflated.count)", path: path, offset: offset)
            }
            guard let raw = Zlib.decompress(deflated, rawLength: rawLength) else {
                throw .corruption("compressed table block does not inflate to its declared \(rawLength) bytes", path: path, offset: offset)
            }
            return raw
        default:
            throw .corruption("table block has unknown type \(stored[typeIndex])", path: path, offset: offset + UInt64(payload.count))
        }
    }
}

/// The first byte position at which `a` and `b` differ (their common prefix's length).
func commonPrefixLength(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Int {
    var i = 0
    let n = min(a.count, b.count)
    while i < n, a[a.startIndex + i] == b[b.startIndex + i] { i += 1 }
    return i
}

/// Byte-wise comparison of two slices: negative, zero or positive.
func compareSlices(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Int {
    let n = min(a.count, b.count)
    var i = 0
    while i < n {
        let x = a[a.startIndex + i], y = b[b.startIndex + i]
        if x != y { return x < y ? -1 : 1 }
        i += 1
    }
    return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
}
