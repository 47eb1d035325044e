/// What the log (and a hint file) holds for a value that lives in a blob file (FORMAT.md, "Blob
/// reference"): enough to find the file and to check that it is the one the commit wrote.
struct BlobReference: Sendable, Equatable {
    /// The blob's id; its file is `blobs/<16 hex digits of id>.blob`.
    var id: UInt64
    /// The value's length in bytes.
    var length: UInt64
    /// The blob file's exact size: a truncated or extended file is caught before it is read.
    var fileLength: UInt64
    /// The value's content checksum (``ContentDigest``).
    var checksum: UInt64
    /// ``LogFormat/blobEncodingRaw`` or ``LogFormat/blobEncodingZlib``.
    var encoding: UInt8

    func append(to writer: inout ByteWriter) {
        writer.append(id)
        writer.append(length)
        writer.append(fileLength)
        writer.append(checksum)
        writer.append(encoding)
    }

    /// Reads a reference's 33 bytes; nil when they are short, name an unknown encoding, or an id
    /// no blob file can have (``LogFormat/maxFileNumber``).
    static func read(from reader: inout ByteReader) -> BlobReference? {
        guard let id = reader.readUInt64(), let length = reader.readUInt64(),
            let fileLength = reader.readUInt64(), let checksum = reader.readUInt64(),
            let encoding = reader.readUInt8(),
            encoding == LogFormat.blobEncodingRaw || encoding == LogFormat.blobEncodingZlib,
            length <= LogFormat.maxBlobLength, (1...LogFormat.maxFileNumber).contains(id)
        else { return nil }
        return BlobReference(id: id, length: length, fileLength: fileLength, checksum: checksum, encoding: encoding)
    }
}
