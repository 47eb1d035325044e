/// Naming and creating segment files.
enum SegmentFile {
    /// `0000000000000001.wal`: 16 lower-case hex digits of the number.
    static func name(_ number: UInt64) -> String {
        let hex = String(number, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex + LogFormat.segmentSuffix
    }

    /// The segment number a file name encodes, or nil for any other file.
    static func number(fromName name: String) -> UInt64? {
        guard name.count == 16 + LogFormat.segmentSuffix.count, name.hasSuffix(LogFormat.segmentSuffix) else { return nil }
        let digits = name.prefix(16)
        guard digits.allSatisfy({ ("0"..."9").contains($0) || ("a"..."f").contains($0) }) else { return nil }
        return UInt64(digits, radix: 16)
    }

    /// The 24-byte segment header (FORMAT.md, "Segment header").
    static func header(number: UInt64) -> [UInt8] {
        var writer = ByteWriter(capacity: LogFormat.segmentHeaderSize)
        writer.append(contentsOf: LogFormat.segmentMagic)
        writer.append(LogFormat.formatVersion)
        writer.append(UInt16(0))
        writer.append(number)
        writer.append(checksum(writer.bytes[...]))
        return writer.bytes
    }

    /// Creates (or re-creates, empty) segment `number` holding only its header. Nothing is
    /// durable yet: call ``makeDurable(_:in:fileSystem:)`` before appending a frame.
    static func start(
        number: UInt64, in directory: String, fileSystem: any FileSystem
    ) throws(EngineError) -> any StoreFile {
        let file = try fileSystem.openFile(directory + "/" + name(number), create: true)
        try file.truncate(to: 0)
        try file.write(header(number: number), at: 0)
        return file
    }

    /// Syncs a new segment and its directory entry, so a frame is never appended to a segment
    /// that could vanish in a power loss.
    static func makeDurable(_ file: any StoreFile, in directory: String, fileSystem: any FileSystem) throws(EngineError) {
        try file.sync()
        try fileSystem.syncDirectory(directory)
    }

    /// ``start(number:in:fileSystem:)`` then ``makeDurable(_:in:fileSystem:)``.
    static func create(
        number: UInt64, in directory: String, fileSystem: any FileSystem
    ) throws(EngineError) -> any StoreFile {
        let file = try start(number: number, in: directory, fileSystem: fileSystem)
        try makeDurable(file, in: directory, fileSystem: fileSystem)
        return file
    }
}
