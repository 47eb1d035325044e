import Synchronization

/// A table of the store (FORMAT.md, "Tail and tables"): what the manifest records of it, its
/// open file and its reader. Immutable; whoever holds one (a scan's batch, a read in flight)
/// keeps the file readable even after a merge removed its name.
final class StoreTable: Sendable {
    let record: Manifest.Table
    let file: any StoreFile
    let reader: TableReader
    /// The table's metadata has been loaded, and with it its key range checked against the
    /// record's (``TableReader/expectedKeys``).
    private let checked = Atomic<Bool>(false)

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
        let reader = try TableReader(
            source: FileTableSource(file: file), id: record.number, cache: cache,
            expectedKeys: TableReader.KeyBounds(smallest: record.smallestKey, largest: record.largestKey))
        return StoreTable(record: record, file: file, reader: reader)
    }

    /// The table number a finished or temporary table file name, or a table's partitions
    /// scratch file name (``TableFormat/scratchName(_:)``), encodes, or nil.
    static func number(fromName name: String) -> UInt64? {
        var stem = name
        if stem.hasSuffix(LogFormat.temporarySuffix) {
            stem.removeLast(LogFormat.temporarySuffix.count)
            if stem.hasSuffix(TableFormat.scratchInfix) { stem.removeLast(TableFormat.scratchInfix.count) }
        }
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

    /// True once ``checkOnce()`` (or any read that loaded the metadata through it) has passed.
    var isChecked: Bool { checked.load(ordering: .acquiring) }

    /// Loads the table's metadata if no read has yet, which checks the manifest's key range
    /// against the table's first and last keys. A read that the recorded range turns away (a
    /// point read of a key outside it, a scan of a range that misses it) calls this first, so
    /// a range recorded narrower than the table's is found at the table's first use, not taken
    /// as "absent". One atomic load once checked.
    func checkOnce() throws(EngineError) {
        guard !isChecked else { return }
        _ = try reader.metadataLoaded()
        checked.store(true, ordering: .releasing)
    }
}

/// Writes one table file under its temporary name (`<n>.sst-tmp`), from entries in ascending key
/// order, in steps: the bytes the builder produces are written and synced about every MiB, so a
/// commit's sync meanwhile never queues behind a whole table. ``finish()`` syncs the rest and
/// returns the manifest's record of it; the caller renames it into place.
///
/// Memory: a table's filter and index partitions follow all its data, so they must wait
/// somewhere while the data is written. They wait in memory up to ``Limits/spillBytes``
/// (1 MiB); past that, they are appended to a scratch file beside the table,
/// `<n>.sst-partitions-tmp` (``TableFormat/scratchName(_:)``), and ``finish()`` copies it into
/// the table after the last data block, ``Limits/copyBytes`` (1 MiB) at a time, then removes it.
/// So a write holds at most about 2 MiB of partitions (those waiting, up to ``Limits/spillBytes``
/// and one partition more, and one window of the copy) plus the builder's ``TableBuilder/heldMetadataBound(_:)``, whatever the
/// table's size; only the top-level index's entries (about 20 bytes per partition of about
/// 3,000 keys) grow with it. A table whose partitions fit in ``Limits/spillBytes`` (about
/// 800,000 keys) makes no scratch file. The scratch is never synced: power loss discards it
/// with the unfinished table, and open removes both by name as leftovers. The bytes written are
/// those ``TableBuilder/build(_:options:)`` makes of the same entries.
struct TableWriter {
    /// A table's partitions are held in memory up to this many bytes, then appended to the
    /// scratch file; ``finish()`` copies the scratch into the table this many bytes at a time
    /// (``Limits``).
    static let spillBytes = 1 << 20

    /// What a write holds; tests make them small to spill tables of a few keys.
    struct Limits: Sendable {
        /// ``TableBuilder/Options/partitionSize``.
        var partitionSize = TableBuilder.Options().partitionSize
        /// The partition bytes held before they are appended to the scratch file.
        var spillBytes = TableWriter.spillBytes
        /// The window of ``TableWriter/finish()``'s copy of the scratch file into the table.
        var copyBytes = TableWriter.spillBytes
    }

    let number: UInt64
    let level: UInt32
    let temporaryPath: String
    let finalPath: String
    /// The partitions' scratch file, `<n>.sst-partitions-tmp`; created only once they pass
    /// ``Limits/spillBytes``.
    let scratchPath: String
    let limits: Limits
    private let fileSystem: any FileSystem
    private let file: any StoreFile
    private var builder: TableBuilder
    private var written: UInt64 = 0
    private var unsynced = 0
    private var smallest: [UInt8]?
    private var largest: [UInt8] = []
    private var blobIDs: [UInt64] = []
    /// The partitions' bytes taken from the builder and not yet in the scratch file.
    private var partitions: [UInt8] = []
    private var scratch: (any StoreFile)?
    private var spilled: UInt64 = 0

    /// Entries added so far.
    var entryCount: Int { builder.entryCount }

    init(
        number: UInt64, level: UInt32, directory: String, options: LogStore.Options, fileSystem: any FileSystem,
        limits: Limits = Limits()
    ) throws(EngineError) {
        precondition(limits.copyBytes >= 1, "the scratch is copied in windows of at least a byte")
        self.number = number
        self.level = level
        self.limits = limits
        self.fileSystem = fileSystem
        finalPath = directory + "/" + TableFormat.name(number)
        temporaryPath = finalPath + LogFormat.temporarySuffix
        scratchPath = directory + "/" + TableFormat.scratchName(number)
        file = try fileSystem.openFile(temporaryPath, create: true)
        try file.truncate(to: 0)
        builder = TableBuilder(
            options: TableBuilder.Options(
                blockSize: LogStore.tableBlockSize, compressionLevel: options.compressionLevel, partitionSize: limits.partitionSize))
    }

    /// Adds `entry`, whose key is above every key added before.
    mutating func add(_ entry: TableEntry) throws(EngineError) {
        try builder.add(entry)
        if smallest == nil { smallest = entry.key }
        largest = entry.key
        if case .blob(let reference) = entry.value { blobIDs.append(reference.id) }
        try write(builder.takeBytes())
        let cut = builder.takePartitionBytes()
        if !cut.isEmpty {
            partitions += cut
            if partitions.count >= limits.spillBytes { try spill() }
        }
    }

    /// Writes the last data block, the partitions (the scratch file's, then those held), the
    /// top-level index and the footer, syncs the file, removes the scratch file, and returns the
    /// table's record (the blob ids sorted, without repeats). At least one entry must have been
    /// added.
    mutating func finish() throws(EngineError) -> Manifest.Table {
        let ending = builder.finishTakingPartitions()
        try write(ending.data)
        if let scratch {
            var offset: UInt64 = 0
            while offset < spilled {
                let count = Int(min(UInt64(limits.copyBytes), spilled - offset))
                let window = try scratch.read(at: offset, count: count)
                guard window.count == count else {
                    throw EngineError(
                        .io, "the partitions scratch file ends at \(offset + UInt64(window.count)) bytes, before the \(spilled) written to it",
                        path: scratchPath)
                }
                try write(window)
                offset += UInt64(count)
            }
        }
        try write(partitions)
        partitions = []
        try write(ending.partitions)
        try write(ending.trailer)
        try file.sync()
        if scratch != nil {
            scratch = nil
            // Best effort: a scratch file left behind is removed by open, by its name.
            try? fileSystem.removeFile(scratchPath)
        }
        let ids = Array(Set(blobIDs)).sorted()
        return Manifest.Table(
            number: number, level: level, length: written, entryCount: UInt64(builder.entryCount),
            smallestKey: smallest ?? [], largestKey: largest, blobIDs: ids)
    }

    /// Best-effort removal of what the writer made (its temporary table and scratch file), for
    /// a write given up; anything left is removed by the next open.
    func discard() {
        try? fileSystem.removeFile(temporaryPath)
        if scratch != nil { try? fileSystem.removeFile(scratchPath) }
    }

    /// The partition bytes the writer and its builder hold now while entries are added (the
    /// top-level index's entries aside): at most ``Limits/spillBytes`` plus one partition more,
    /// and the builder's bound. ``finish()`` adds one window of ``Limits/copyBytes``.
    var heldMetadataBytes: Int { partitions.count + builder.heldMetadataBytes }

    /// Appends the partition bytes held to the scratch file (created at the first spill).
    private mutating func spill() throws(EngineError) {
        let scratch: any StoreFile
        if let open = self.scratch {
            scratch = open
        } else {
            scratch = try fileSystem.openFile(scratchPath, create: true)
            self.scratch = scratch
            try scratch.truncate(to: 0)
        }
        try scratch.write(partitions, at: spilled)
        spilled += UInt64(partitions.count)
        partitions.removeAll(keepingCapacity: true)
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
