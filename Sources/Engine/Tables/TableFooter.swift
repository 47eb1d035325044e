/// The fixed-size footer at the end of a table file (FORMAT.md, "Table files", "Footer"),
/// checked by a crc32 of its own. Its fields by version:
/// - **5** (partitioned): ``filter`` is the region of every filter and index partition, back to
///   back after the data blocks; ``index`` is the top-level index; ``filterChecksum`` holds the
///   number of partitions; ``indexChecksum`` is the crc32 of the top-level index's raw contents.
/// - **4**: ``filter`` is the whole-table filter block and ``index`` the index block, each with
///   the crc32 of its raw contents.
struct TableFooter: Sendable, Equatable {
    var version: UInt16 = TableFormat.version
    /// Version 4: the filter block. Version 5: the partitions (may be empty, for a table of no
    /// entries). Either way it starts where the data blocks end.
    var filter: BlockHandle
    /// Version 4: the index block. Version 5: the top-level index.
    var index: BlockHandle
    /// Version 4: crc32 of the filter block's raw contents (after inflation): the block's trailer
    /// checks the stored bytes, this checks what they decode to. Version 5: the partition count.
    var filterChecksum: UInt32
    /// crc32 of the index block's (version 5: the top-level index's) raw contents.
    var indexChecksum: UInt32

    /// True for a version-5 table: partitioned filter and index.
    var isPartitioned: Bool { version >= 5 }
    /// Where the data blocks end (and the metadata begins).
    var dataEnd: UInt64 { filter.offset }
    /// Version 5: the number of partitions the top-level index names.
    var partitionCount: Int { Int(filterChecksum) }

    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: TableFormat.footerSize)
        writer.append(contentsOf: TableFormat.magic)
        writer.append(version)
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
    /// bytes, checking its crc32, magic, version (4 or 5) and that the filter block (version 5:
    /// the partitions), then the index block (the top-level index), fill the bytes before it
    /// exactly.
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
        guard version == TableFormat.version || version == TableFormat.unpartitionedVersion else {
            throw EngineError(
                .unsupportedFormat,
                "table format version \(version) is not supported (this build reads \(TableFormat.unpartitionedVersion) and \(TableFormat.version)); read it with the build that wrote it",
                path: path, offset: at + 8)
        }
        guard reader.readUInt16()! == 0, reader.readUInt32()! == 0 else {
            throw EngineError(.unsupportedFormat, "table footer's flags or reserved bytes are not zero", path: path, offset: at + 10)
        }
        let footer = TableFooter(
            version: version,
            filter: BlockHandle(offset: reader.readUInt64()!, length: reader.readUInt64()!),
            index: BlockHandle(offset: reader.readUInt64()!, length: reader.readUInt64()!),
            filterChecksum: reader.readUInt32()!, indexChecksum: reader.readUInt32()!)
        let trailer = UInt64(TableFormat.trailerSize)
        // Version 5's partitions are empty for a table of no entries; a filter block never is.
        let smallestFilter = footer.isPartitioned ? 0 : trailer
        guard footer.filter.length >= smallestFilter, footer.index.length >= trailer,
            footer.filter.offset <= at, footer.filter.length <= at - footer.filter.offset,
            footer.filter.offset + footer.filter.length == footer.index.offset,
            footer.index.length <= at - footer.index.offset, footer.index.offset + footer.index.length == at
        else {
            throw .corruption(
                "table footer's handles (filter \(footer.filter.offset)+\(footer.filter.length), index \(footer.index.offset)+\(footer.index.length)) do not fill the \(at) bytes before it",
                path: path, offset: at + 16)
        }
        if footer.isPartitioned {
            // Each partition is two stored blocks of at least a trailer each.
            guard UInt64(footer.partitionCount) <= footer.filter.length / (2 * trailer),
                (footer.partitionCount == 0) == (footer.filter.length == 0)
            else {
                throw .corruption(
                    "table footer declares \(footer.partitionCount) partitions in \(footer.filter.length) bytes",
                    path: path, offset: at + 48)
            }
        }
        return footer
    }
}
