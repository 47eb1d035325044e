/// The fixed-size footer at the end of a table file (FORMAT.md, "Table files", "Footer"): the
/// handles of the filter and index blocks and their crc32s, checked by a crc32 of its own.
struct TableFooter: Sendable, Equatable {
    var filter: BlockHandle
    var index: BlockHandle
    /// crc32 of the filter block's raw contents (after inflation): the block's trailer checks
    /// the stored bytes, this checks what they decode to.
    var filterChecksum: UInt32
    /// crc32 of the index block's raw contents (after inflation).
    var indexChecksum: UInt32

    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: TableFormat.footerSize)
        writer.append(contentsOf: TableFormat.magic)
        writer.append(TableFormat.version)
        writer.append(UInt16(0))  // flags
        writer.append(UInt32(0))  // reserved
        writer.append(filter.offset)
        writer.append(filter.length)
        writer.append(index.offset)
        writer.append(index.length)
        writer.append(filterChecksum)
        writer.append(indexChecksum)
        writer.append(checksum(writer.bytes[...]))
        return writer.bytes
    }

    /// Decodes the footer of a table of `fileSize` bytes from its last ``TableFormat/footerSize``
    /// bytes, checking its crc32, magic, version and that the filter block, then the index block,
    /// fill the bytes before it exactly.
    static func decode(_ bytes: ArraySlice<UInt8>, fileSize: UInt64, path: String) throws(EngineError) -> TableFooter {
        let size = UInt64(TableFormat.footerSize)
        guard fileSize >= size, bytes.count == TableFormat.footerSize else {
            throw .corruption("table of \(fileSize) bytes is shorter than its \(size)-byte footer", path: path, offset: 0)
        }
        let at = fileSize - size
        guard checksum(bytes.prefix(56)) == loadUInt32(bytes, at: bytes.startIndex + 56) else {
            throw .corruption("table footer fails its crc32 (cut short, or not a table)", path: path, offset: at)
        }
        var reader = ByteReader(bytes)
        guard reader.readBytes(8).map(Array.init) == TableFormat.magic else {
            throw EngineError(.unsupportedFormat, "table footer's magic is not WALSTABL", path: path, offset: at)
        }
        let version = reader.readUInt16()!
        guard version == TableFormat.version else {
            throw EngineError(
                .unsupportedFormat,
                "table format version \(version) is not supported (this build reads \(TableFormat.version)); read it with the build that wrote it",
                path: path, offset: at + 8)
        }
        guard reader.readUInt16()! == 0, reader.readUInt32()! == 0 else {
            throw EngineError(.unsupportedFormat, "table footer's flags or reserved bytes are not zero", path: path, offset: at + 10)
        }
        let footer = TableFooter(
            filter: BlockHandle(offset: reader.readUInt64()!, length: reader.readUInt64()!),
            index: BlockHandle(offset: reader.readUInt64()!, length: reader.readUInt64()!),
            filterChecksum: reader.readUInt32()!, indexChecksum: reader.readUInt32()!)
        let trailer = UInt64(TableFormat.trailerSize)
        guard footer.filter.length >= trailer, footer.index.length >= trailer,
            footer.filter.offset <= at, footer.filter.length <= at - footer.filter.offset,
            footer.filter.offset + footer.filter.length == footer.index.offset,
            footer.index.length <= at - footer.index.offset, footer.index.offset + footer.index.length == at
        else {
            throw .corruption(
                "table footer's handles (filter \(footer.filter.offset)+\(footer.filter.length), index \(footer.index.offset)+\(footer.index.length)) do not fill the \(at) bytes before it",
                path: path, offset: at + 16)
        }
        return footer
    }
}
