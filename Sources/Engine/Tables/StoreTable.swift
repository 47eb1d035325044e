/// A table of the store (FORMAT.md, "Tail and tables"): what the manifest records of it, its
/// open file and its reader. Immutable; whoever holds one (a scan's batch, a read in flight)
/// keeps the file readable even after a merge removed its name.
final class StoreTable: Sendable {
    let record: Manifest.Table
    let file: any StoreFile
    let reader: TableReader

    var number: UInt64 { record.number }
    var level: UInt32 { record.level }

    init(record: Manifest.Table, file: any StoreFile, reader: TableReader) {
        self.record = record
        self.file = file
        self.reader = reader
    }

    /// Opens table `record` in `directory`: checks its length against the manifest's (a table cut
    /// at a block boundary would read as whole otherwise), then reads and checks its footer. The
    /// rest of its metadata is read on first use (``TableReader``).
    static func open(
        _ record: Manifest.Table, directory: String, fileSystem: any FileSystem, cache: TableBlockCache
    ) throws(EngineError) -> StoreTable {
        let path = directory + "/" + TableFormat.name(record.number)
        let file = try fileSystem.openFile(path, create: false)
        let size = try file.size()
        guard size == record.length else {
            throw .corruption(
                "table is \(size) bytes but the manifest records \(record.length) (cut short or added to)",
                path: path, offset: min(size, record.length))
        }
        let reader = try TableReader(source: FileTableSource(file: file), id: record.number, cache: cache)
        return StoreTable(record: record, file: file, reader: reader)
    }

    /// The table number a finished or temporary table file name encodes, or nil.
    static func number(fromName name: String) -> UInt64? {
        let stem = name.hasSuffix(LogFormat.temporarySuffix) ? String(name.dropLast(LogFormat.temporarySuffix.count)) : name
        guard stem.count == 16 + LogFormat.tableSuffix.count, stem.hasSuffix(LogFormat.tableSuffix) else { return nil }
        return parseFileNumber(stem.prefix(16))
    }

    /// False when `key` lies outside the table's key range (no filter check needed).
    func covers(_ key: [UInt8]) -> Bool {
        key.withUnsafeBytes { covers($0) }
    }

    /// ``covers(_:)-([UInt8])`` for a key in place.
    func covers(_ key: UnsafeRawBufferPointer) -> Bool {
        record.smallestKey.withUnsafeBytes { compareBytes($0, key) <= 0 }
            && record.largestKey.withUnsafeBytes { compareBytes(key, $0) <= 0 }
    }

    /// False when no key of `range` can be in the table.
    func overlaps(_ range: LogStore.KeyRange) -> Bool {
        range.isAboveLower(record.largestKey) && range.isBelowUpper(record.smallestKey)
    }
}

/// Writes one table file under its temporary name (`<n>.sst-tmp`), from entries in ascending key
/// order, in steps: the bytes the builder produces are written and synced about every MiB, so a
/// commit's sync meanwhile never queues behind a whole table. ``finish()`` syncs the rest and
/// returns the manifest's record of it; the caller renames it into place.
struct TableWriter {
    let number: UInt64
    let level: UInt32
    let temporaryPath: String
    let finalPath: String
    private let file: any StoreFile
    private var builder: TableBuilder
    private var written: UInt64 = 0
    private var unsynced = 0
    private var smallest: [UInt8]?
    private var largest: [UInt8] = []
    private var blobIDs: [UInt64] = []

    /// Entries added so far.
    var entryCount: Int { builder.entryCount }

    init(
        number: UInt64, level: UInt32, directory: String, options: LogStore.Options, fileSystem: any FileSystem
    ) throws(EngineError) {
        self.number = number
        self.level = level
        finalPath = directory + "/" + TableFormat.name(number)
        temporaryPath = finalPath + LogFormat.temporarySuffix
        file = try fileSystem.openFile(temporaryPath, create: true)
        try file.truncate(to: 0)
        builder = TableBuilder(options: TableBuilder.Options(
            blockSize: LogStore.tableBlockSize, compressionLevel: options.compressionLevel))
    }

    /// Adds `entry`, whose key is above every key added before.
    mutating func add(_ entry: TableEntry) throws(EngineError) {
        try builder.add(entry)
        if smallest == nil { smallest = entry.key }
        largest = entry.key
        if case .blob(let reference) = entry.value { blobIDs.append(reference.id) }
        try write(builder.takeBytes())
    }

    /// Writes the filter, index and footer, syncs the file, and returns its record (the blob ids
    /// sorted, without repeats). At least one entry must have been added.
    mutating func finish() throws(EngineError) -> Manifest.Table {
        try write(builder.finish())
        try file.sync()
        let ids = Array(Set(blobIDs)).sorted()
        return Manifest.Table(
            number: number, level: level, length: written, entryCount: UInt64(builder.entryCount),
            smallestKey: smallest ?? [], largestKey: largest, blobIDs: ids)
    }

    private mutating func write(_ bytes: [UInt8]) throws(EngineError) {
        guard !bytes.isEmpty else { return }
        try file.write(bytes, at: written)
        written += UInt64(bytes.count)
        unsynced += bytes.count
        if unsynced >= PackWriter.syncStep {
            try file.sync()
            unsynced = 0
        }
    }
}
