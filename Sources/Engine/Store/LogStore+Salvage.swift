extension LogStore {
    /// What ``LogStore/salvage(at:options:)`` kept, set aside and lost.
    public struct SalvageReport: Sendable, Equatable {
        /// One range of bytes moved out of the store into its `quarantine/` folder.
        public struct Quarantined: Sendable, Equatable {
            /// The store file the bytes came from, relative to the store (`0000000000000003.wal`,
            /// `blobs/00000000000000a1.blob`).
            public var file: String
            /// The bytes of that file moved aside (from 0 to its size when the whole file was).
            public var range: Range<UInt64>
            /// Where they are now, relative to the store (`quarantine/…`).
            public var savedAs: String
            /// Why they had to go.
            public var reason: String
        }

        /// Every damaged or dropped byte range, in the order salvage set them aside. Nothing is
        /// deleted: each range is a file under `quarantine/`.
        public var quarantined: [Quarantined] = []
        /// The last commit of the prefix of the commit order that the store now holds.
        public var lastKeptSequence: UInt64 = 0
        /// Commits known to be lost: from the first one the kept prefix lacks to the highest known
        /// to have been durable — seen in the bytes set aside, recorded by a segment hint (a
        /// sealed segment's, or the newest one's at a clean close), or by the manifest's recorded
        /// log end (nil when none is missing). A damaged last commit of a cleanly closed store is
        /// reported so, though open would cut it like a torn write. Damage can hide later ones.
        public var lostSequences: ClosedRange<UInt64>?
        /// Keys whose latest version salvage knows it lost (from verified frames in the bytes set
        /// aside, from hint files that list what a damaged file held, and from values that could
        /// not be read), ascending. Damage can hide others: ``quarantined`` says where. The keys
        /// of a table's damaged data block are never known (the block cannot be read).
        public var lostKeys: [[UInt8]] = []
        /// Keys deleted by salvage because their value could not be read (a damaged or missing
        /// blob); they are in ``lostKeys`` too.
        public var deletedKeys: [[UInt8]] = []

        /// True when salvage found nothing damaged.
        public var isClean: Bool { quarantined.isEmpty && lostKeys.isEmpty }
    }

    /// The name of the folder, inside a store's directory, that ``salvage(at:options:)`` moves
    /// damaged and dropped bytes into. Its presence says the store was salvaged with damage.
    public static let quarantineDirectoryName = "quarantine"

    /// Repairs a store that ``open(at:options:)`` refuses as ``EngineError/Code/corruption``,
    /// keeping everything intact and moving every damaged or dropped byte range into the store's
    /// `quarantine/` folder (nothing is deleted), and returns what it kept and lost. Then open the
    /// store as usual. Never run implicitly: a store is salvaged only when this is called.
    ///
    /// What it keeps: the longest prefix of the commit order the log still holds intact (the
    /// first damaged frame and everything after it are set aside, since a prefix cannot skip a
    /// commit), every entry of every intact data block of every table (a damaged table — a data
    /// block, its footer, filter or index, the file cut short — is rewritten from its intact
    /// blocks under a new number, found by its index or, when that is unreadable, by walking the
    /// blocks' crc32s; the keys of its damaged blocks cannot be read, so they are not reported,
    /// and older versions of them in older tables may show again), and every value
    /// whose blob is intact (a key whose blob is
    /// damaged or missing is deleted, in one commit). Segment hints are rebuilt; one that records
    /// frames its segment lost is set aside, and its keys reported. A damaged manifest is set
    /// aside and rebuilt from the tables and segments present, newest (highest number) first (a
    /// table left by a merge whose clean-up was interrupted is then kept too, and may bring back
    /// keys it had replaced; and if
    /// the oldest segment's header is damaged as well, that segment is set aside and the log
    /// resumes at the next one whose header is intact, the one case where the commits kept are not
    /// a prefix).
    ///
    /// It reads and verifies every frame, block and blob, so it takes as long as reading the
    /// whole store. When it returns, the repaired store is durable and the report's files are in
    /// `quarantine/`. On a store with no damage it changes nothing but rebuilding hint files, and
    /// reports ``SalvageReport/isClean``.
    ///
    /// - Throws: ``EngineError``: ``EngineError/Code/locked`` while the store is open,
    ///   ``EngineError/Code/notFound`` when there is no store, ``EngineError/Code/unsupportedFormat``
    ///   for a file of another format version (salvage repairs only what this build writes), and
    ///   I/O errors. A failed salvage leaves the store openable by another salvage.
    public static func salvage(at path: String, options: Options = Options()) throws(EngineError) -> SalvageReport {
        try salvage(at: path, options: options, fileSystem: PosixFileSystem())
    }

    package static func salvage(
        at path: String, options: Options, fileSystem: any FileSystem
    ) throws(EngineError) -> SalvageReport {
        var options = try options.validated()
        let names: [String]
        do throws(EngineError) {
            names = try fileSystem.listDirectory(path)
        } catch  where error.errno == Syscall.noSuchFile {
            throw EngineError(.notFound, "there is no store here to salvage", path: path)
        }
        guard names.contains(where: { SegmentFile.number(fromName: $0) != nil || $0 == LogFormat.manifestName }) else {
            throw EngineError(.notFound, "there is no store here to salvage (no segment, no manifest)", path: path)
        }
        var salvage = Salvage(directory: path, fileSystem: fileSystem)
        // The repairs run under the store's lock, released before the store is opened below.
        let lock = try fileSystem.lockFile(path + "/" + LogFormat.lockFileName)
        do throws(EngineError) {
            try salvage.setAsideSegmentHints()
            try salvage.upgradeFormat3(options: options)
            try salvage.repairManifestIfDamaged()
            try salvage.forgetRecordedLogEnd()
            try salvage.repairTables(options: options)
            let kept = try salvage.recoverLongestPrefix()
            salvage.report.lastKeptSequence = kept
            // The first commit dropped is the one after the prefix, even when its frame was too
            // damaged to read.
            if let highest = salvage.highestKnownSequence, highest > kept { salvage.report.lostSequences = kept + 1...highest }
        } catch {
            lock.unlock()
            throw error
        }
        lock.unlock()
        // The last pass reads every value through an open store: what is left unreadable is in a
        // blob (the frames and tables were verified above).
        options.creation = .never
        let store = try open(at: path, options: options, fileSystem: fileSystem)
        defer { try? store.close() }
        try salvage.deleteUnreadableValues(of: store)
        try store.close()
        salvage.report.lostKeys = Array(Set(salvage.lostKeys.map(HashedKey.init))).map(\.bytes)
            .sorted { compareBytes($0, $1) < 0 }
        return salvage.report
    }
}

/// The steps of ``LogStore/salvage(at:options:)``, and what they found.
private struct Salvage {
    let directory: String
    let fileSystem: any FileSystem
    var report = LogStore.SalvageReport()
    var lostKeys: [[UInt8]] = []
    /// The highest commit known to have been durable: seen in the frames set aside, or recorded
    /// by a segment hint or by the manifest's log end. Those the kept prefix does not reach are
    /// reported lost.
    var highestKnownSequence: UInt64?
    private var quarantineReady = false

    init(directory: String, fileSystem: any FileSystem) {
        self.directory = directory
        self.fileSystem = fileSystem
    }

    static let quarantineName = LogStore.quarantineDirectoryName
    var quarantine: String { directory + "/" + Self.quarantineName }

    // MARK: Moving bytes aside

    /// A name under `quarantine/` not taken yet, from `base`.
    private mutating func freshName(_ base: String) throws(EngineError) -> String {
        if !quarantineReady {
            if try fileSystem.createDirectory(quarantine) { try fileSystem.syncDirectory(directory) }
            quarantineReady = true
        }
        let taken = fileSystem.listNames(quarantine)
        var name = base
        var counter = 1
        while taken.contains(name) {
            name = base + ".\(counter)"
            counter += 1
        }
        return name
    }

    /// Moves the store file `name` (relative to the store) into `quarantine/` whole.
    mutating func setAside(_ name: String, reason: String) throws(EngineError) {
        let size = try fileSystem.openFile(directory + "/" + name, create: false).size()
        let saved = try freshName(name.replacingSlashes())
        try fileSystem.rename(directory + "/" + name, to: quarantine + "/" + saved)
        try fileSystem.syncDirectory(quarantine)
        try fileSystem.syncDirectory(parent(of: name))
        report.quarantined.append(.init(file: name, range: 0..<size, savedAs: Self.quarantineName + "/" + saved, reason: reason))
    }

    /// Copies the bytes of store file `name` from `offset` on into `quarantine/` (synced), then cuts
    /// the file there (synced): a crash in between leaves both copies, never neither.
    mutating func setAsideTail(of name: String, from offset: UInt64, reason: String) throws(EngineError) {
        let file = try fileSystem.openFile(directory + "/" + name, create: false)
        let size = try file.size()
        guard offset < size else { return }
        try copyAside(range: offset..<size, of: name, reason: reason)
        try file.truncate(to: offset)
        try file.sync()
    }

    /// Copies the bytes `range` of store file `name` into `quarantine/` (synced) and reports them.
    mutating func copyAside(range: Range<UInt64>, of name: String, reason: String) throws(EngineError) {
        let file = try fileSystem.openFile(directory + "/" + name, create: false)
        let saved = try freshName(name.replacingSlashes() + "@\(range.lowerBound)")
        let copy = try fileSystem.openFile(quarantine + "/" + saved, create: true)
        var position = range.lowerBound
        while position < range.upperBound {
            let count = Int(min(UInt64(1 << 20), range.upperBound - position))
            try copy.write(try file.read(at: position, count: count), at: position - range.lowerBound)
            position += UInt64(count)
        }
        try copy.sync()
        try fileSystem.syncDirectory(quarantine)
        report.quarantined.append(.init(file: name, range: range, savedAs: Self.quarantineName + "/" + saved, reason: reason))
    }

    private func parent(of name: String) -> String {
        guard let slash = name.lastIndex(of: "/") else { return directory }
        return directory + "/" + name[..<slash]
    }

    /// Notes the commits and keys of the verified frames in segment `number` from `offset` on
    /// (before they are set aside).
    mutating func noteLost(inSegment number: UInt64, from offset: UInt64) throws(EngineError) {
        let path = directory + "/" + SegmentFile.name(number)
        let file = try fileSystem.openFile(path, create: false)
        var reader = try LogReader(file: file, segmentNumber: number, isNewest: true)
        for frame in try reader.verifiedFrames(from: max(offset, UInt64(LogFormat.segmentHeaderSize))) where !frame.isClose {
            highestKnownSequence = max(highestKnownSequence ?? 0, frame.sequence)
            if let records = try? CommitDecoding.records(inPayload: frame.payload, frameOffset: frame.offset, path: path) {
                lostKeys += records.map(\.key)
            }
        }
    }

    // MARK: The steps

    /// Removes every segment hint, so that recovery verifies every frame: hints are derived and
    /// open writes them again. A whole hint that its segment contradicts (it records frames the
    /// segment no longer holds) is set aside instead, as evidence, and the keys of the frames it
    /// records past the segment's end are reported lost.
    mutating func setAsideSegmentHints() throws(EngineError) {
        let names = try fileSystem.listDirectory(directory)
        let segments = names.compactMap(SegmentFile.number(fromName:))
        let newest = segments.max()
        for name in names.sorted() {
            guard let number = SegmentHint.number(fromName: name), segments.contains(number),
                !name.hasSuffix(LogFormat.temporarySuffix)
            else { continue }
            let segment = try fileSystem.openFile(directory + "/" + SegmentFile.name(number), create: false)
            let size = try segment.size()
            do throws(SegmentHint.Unusable) {
                guard let file = try? fileSystem.openFile(directory + "/" + name, create: false) else { continue }
                let hint = try SegmentHint.load(file, number: number, fileSize: size, isNewest: number == newest, firstSequence: nil)
                try hint.checkLastFrame(in: segment)
                // The frames a hint records were durable: a damaged one is a lost commit, not a
                // torn write, even where recovery cannot tell the two apart.
                noteRecorded(by: hint)
            } catch {
                switch error {
                case .unsupportedVersion(let version):
                    try LogFormat.checkVersion(version, of: "segment hint", path: directory + "/" + name)
                case .contradicted(let message):
                    noteKeysPast(size, inHint: name, number: number)
                    try setAside(name, reason: "\(message): the segment lost frames this hint records")
                    continue
                case .invalid:
                    break
                }
            }
            try fileSystem.removeFile(directory + "/" + name)
        }
        try fileSystem.syncDirectory(directory)
    }

    /// Notes the last commit `hint` records as known durable.
    private mutating func noteRecorded(by hint: SegmentHint) {
        guard hint.frameCount > 0 else { return }
        highestKnownSequence = max(highestKnownSequence ?? 0, hint.firstSequence + hint.frameCount - 1)
    }

    /// The keys of a contradicted hint's entries whose records lie past `size` bytes.
    private mutating func noteKeysPast(_ size: UInt64, inHint name: String, number: UInt64) {
        // Loaded as the newest segment's of unbounded size: the check it failed is the length.
        guard let file = try? fileSystem.openFile(directory + "/" + name, create: false),
            let hint = try? SegmentHint.load(file, number: number, fileSize: .max, isNewest: true, firstSequence: nil)
        else { return }
        noteRecorded(by: hint)
        lostKeys += hint.puts.filter { $0.location.blockOffset + UInt64($0.location.blockLength) > size }.map(\.key)
        // Deletes carry no location: the last frame lost tells which of them went with it.
        let lastKept =
            hint.puts.filter { $0.location.blockOffset + UInt64($0.location.blockLength) <= size }
            .map(\.location.sequence).max() ?? 0
        lostKeys += hint.deletes.filter { $0.sequence > lastKept }.map(\.key)
    }

    /// A format-3 store is upgraded first (as open would); a pack the upgrade finds damaged is set
    /// aside with its hint, its keys (as far as its hint still tells) reported lost, and the
    /// format-3 manifest rewritten without it, until the upgrade succeeds.
    mutating func upgradeFormat3(options: LogStore.Options) throws(EngineError) {
        var previous: String?
        while true {
            let names = try fileSystem.listDirectory(directory)
            guard case .version3(var old) = try? Manifest.read(in: directory, names: names, fileSystem: fileSystem) else {
                return
            }
            do throws(EngineError) {
                _ = try Upgrade.run(old, directory: directory, names: names, fileSystem: fileSystem, options: options)
                return
            } catch  where error.code == .corruption {
                guard error.description != previous, let path = error.path,
                    let pack = old.packs.first(where: { path == directory + "/" + PackFile.name($0) })
                else { throw error }
                previous = error.description
                let index = old.packs.firstIndex(of: pack)!
                if let hint = try? fileSystem.openFile(directory + "/" + PackFile.hintName(pack), create: false),
                    let entries = try? HintFile.load(hint, packNumber: pack, packSize: old.packSizes[index])
                {
                    lostKeys += entries.map(\.key)
                }
                if names.contains(PackFile.name(pack)) { try setAside(PackFile.name(pack), reason: error.message) }
                if names.contains(PackFile.hintName(pack)) {
                    try setAside(PackFile.hintName(pack), reason: "the hint of a pack set aside")
                }
                old.packs.remove(at: index)
                old.packSizes.remove(at: index)
                try writeManifestBytes(old.encoded())
            }
        }
    }

    /// A manifest that fails its checks is set aside and rebuilt from what is present: every
    /// finished table whose entries can all be read (newest, by number, first), and the log from
    /// the oldest segment, whose header says which commit it continues from.
    mutating func repairManifestIfDamaged() throws(EngineError) {
        let names = try fileSystem.listDirectory(directory)
        do throws(EngineError) {
            guard case .current(let manifest) = try Manifest.read(in: directory, names: names, fileSystem: fileSystem) else {
                return
            }
            let present = Set(names)
            if let missing = manifest.tables.first(where: { !present.contains(TableFormat.name($0.number)) }) {
                throw .corruption("table \(TableFormat.name(missing.number)) is missing", path: directory, offset: 0)
            }
            return
        } catch  where error.code == .corruption {
            if names.contains(LogFormat.manifestName) {
                try setAside(LogFormat.manifestName, reason: error.message)
            }
        }
        let numbers = names.compactMap { name in
            StoreTable.number(fromName: name).flatMap { TableFormat.name($0) == name ? $0 : nil }
        }.sorted(by: >)
        var tables: [Manifest.Table] = []
        for number in numbers {
            // A table that is not whole is left to the table repair: listed with its length, it
            // is then rewritten from its intact blocks (or dropped when none is).
            let file = try fileSystem.openFile(directory + "/" + TableFormat.name(number), create: false)
            let size = try file.size()
            var record = Manifest.Table(
                number: number, level: 0, length: size, entryCount: 1, smallestKey: [0], largestKey: [0xFF], blobIDs: [])
            if let kept = try? TableSalvage(source: FileTableSource(file: file)), kept.isClean,
                let first = kept.entries.first, let last = kept.entries.last
            {
                record.entryCount = UInt64(kept.entries.count)
                record.smallestKey = first.key
                record.largestKey = last.key
                record.blobIDs = Self.blobIDs(kept.entries)
            }
            tables.append(record)
        }
        let segments = names.compactMap(SegmentFile.number(fromName:)).sorted()
        var logStart = (segments.last ?? 0) + 1
        var lastSequence: UInt64 = 0
        for number in segments {
            let file = try fileSystem.openFile(directory + "/" + SegmentFile.name(number), create: false)
            if let sequence = try? SegmentFile.checkHeader(of: file, number: number) {
                logStart = number
                lastSequence = sequence - 1
                break
            }
            // The oldest segment's header is damaged too: it goes (with what follows it, by
            // recovery's prefix rule), and the log starts after it.
            try setAside(SegmentFile.name(number), reason: "segment header damaged, with the manifest")
        }
        if !segments.contains(logStart) {
            _ = try SegmentFile.create(number: logStart, firstSequence: 1, in: directory, fileSystem: fileSystem)
        }
        try writeManifest(Manifest(logStart: logStart, lastSequence: lastSequence, tables: tables))
    }

    private func writeManifest(_ manifest: Manifest) throws(EngineError) {
        try writeManifestBytes(manifest.encoded())
    }

    private func writeManifestBytes(_ bytes: [UInt8]) throws(EngineError) {
        let temporary = directory + "/" + LogFormat.manifestTemporaryName
        try HintFile.writeSynced(bytes, to: temporary, fileSystem: fileSystem)
        try fileSystem.rename(temporary, to: directory + "/" + LogFormat.manifestName)
        try fileSystem.syncDirectory(directory)
    }

    private static func blobIDs(_ entries: [TableEntry]) -> [UInt64] {
        var ids = Set<UInt64>()
        for entry in entries { if case .blob(let reference) = entry.value { ids.insert(reference.id) } }
        return ids.sorted()
    }

    /// The log end a clean close recorded in the manifest is dropped (recovery then keeps the
    /// longest intact prefix); the commits up to the recorded one were durable, so any of them the
    /// kept prefix does not reach (the segment missing, cut short, or a frame of it damaged) is
    /// reported lost.
    mutating func forgetRecordedLogEnd() throws(EngineError) {
        let names = try fileSystem.listDirectory(directory)
        guard case .current(var manifest) = try Manifest.read(in: directory, names: names, fileSystem: fileSystem),
            manifest.closedSegment != 0
        else { return }
        highestKnownSequence = max(highestKnownSequence ?? 0, manifest.closedSequence)
        manifest.closedSegment = 0
        manifest.closedLength = 0
        manifest.closedSequence = 0
        try writeManifest(manifest)
    }

    /// Verifies every table the manifest lists: its length, footer, filter, index and every data
    /// block (``TableSalvage``). A damaged table — a data block that fails its checks, a damaged
    /// footer, filter or index, a file cut short or of another length than recorded — is
    /// rewritten under a new number from the entries of every intact data block (found by the
    /// index, or by walking the blocks' crc32s when the footer or index is unreadable), and the
    /// manifest switched to it, as a flush installs a table; one with no intact block is dropped
    /// from the manifest. Either way each byte range it could not keep is copied into
    /// `quarantine/` and reported with its reason, and then the old file is removed (nothing of it
    /// is left only there).
    ///
    /// Crash safety: the new table is durable before the manifest names it, and the old file is
    /// moved aside only after. Power loss before the manifest leaves the old table listed (the
    /// new one is an unlisted leftover that open removes) and salvage can run again; after it, the
    /// old file, if still there, is an unlisted leftover and the store opens with the new table.
    mutating func repairTables(options: LogStore.Options) throws(EngineError) {
        let names = try fileSystem.listDirectory(directory)
        guard case .current(var manifest) = try Manifest.read(in: directory, names: names, fileSystem: fileSystem) else {
            return
        }
        var nextNumber = (names.compactMap(StoreTable.number(fromName:)).max() ?? 0) + 1
        var index = 0
        while index < manifest.tables.count {
            let record = manifest.tables[index]
            let name = TableFormat.name(record.number)
            let file = try fileSystem.openFile(directory + "/" + name, create: false)
            let size = try file.size()
            let kept = try TableSalvage(source: FileTableSource(file: file))
            var damage = kept.losses.map { loss in (range: loss.range, reason: loss.message) }
            if size != record.length {
                damage.insert((0..<size, "table is \(size) bytes but the manifest records \(record.length)"), at: 0)
            }
            // Damage behind valid checksums (FORMAT.md, "What is checked against the tables"):
            // the rewrite records the table's true key range and blob list.
            if damage.isEmpty, let first = kept.entries.first, let last = kept.entries.last,
                first.key != record.smallestKey || last.key != record.largestKey || Self.blobIDs(kept.entries) != record.blobIDs
            {
                damage.append((0..<size, "the manifest's key range or blob list for the table disagrees with its entries"))
            }
            guard !damage.isEmpty else {
                index += 1
                continue
            }
            let outcome: String
            if !kept.entries.isEmpty {
                let replacement = nextNumber
                nextNumber += 1
                var writer = try TableWriter(
                    number: replacement, level: record.level, directory: directory, options: options, fileSystem: fileSystem)
                let written: Manifest.Table
                do throws(EngineError) {
                    for entry in kept.entries { try writer.add(entry) }
                    written = try writer.finish()
                } catch {
                    writer.discard()
                    throw error
                }
                try fileSystem.rename(writer.temporaryPath, to: writer.finalPath)
                try fileSystem.syncDirectory(directory)
                manifest.tables[index] = written
                outcome =
                    "its \(kept.keptBlocks.count) intact data blocks (\(kept.entries.count) entries) are in table \(TableFormat.name(replacement))"
                index += 1
            } else {
                manifest.tables.remove(at: index)
                outcome = "no data block of it is intact; its keys are lost, and older versions of them may show again"
            }
            for (range, reason) in damage { try copyAside(range: range, of: name, reason: "\(reason) (\(outcome))") }
            try writeManifest(manifest)
            // Nothing of it is left only here: its intact blocks are in the new table, the rest
            // in quarantine/.
            try fileSystem.removeFile(directory + "/" + name)
            try fileSystem.syncDirectory(directory)
        }
    }

    /// Runs recovery until it succeeds, setting aside what each corruption it reports names: the
    /// damaged frame of a segment and everything after it in the log (every later segment), or a
    /// segment whose header is damaged or does not continue the log, and every later one.
    /// Returns the last commit kept.
    mutating func recoverLongestPrefix() throws(EngineError) -> UInt64 {
        var previous: String?
        while true {
            do throws(EngineError) {
                let log = try RecoveredLog.recover(
                    directory: directory, blobDirectory: directory + "/" + LogFormat.blobDirectoryName, fileSystem: fileSystem,
                    options: LogStore.Options(), tableCache: TableBlockCache(capacity: 0))
                return log.lastSequence
            } catch  where error.code == .corruption {
                // Each pass sets aside what the last one named; the same error twice means it could
                // not, and another pass would not get further.
                guard error.description != previous else { throw error }
                previous = error.description
                try setAside(after: error)
            }
        }
    }

    /// Sets aside what one corruption error of recovery names, so that the next attempt gets past it.
    private mutating func setAside(after error: EngineError) throws(EngineError) {
        let name = error.path.map { path in path.hasPrefix(directory + "/") ? String(path.dropFirst(directory.count + 1)) : path }
        guard let name else { throw error }
        if name == LogFormat.manifestName {
            try repairManifestAfter(error)
            return
        }
        if let number = StoreTable.number(fromName: name), !name.hasSuffix(LogFormat.temporarySuffix) {
            // A listed table that is missing or does not open.
            try repairManifestAfter(error, dropping: number)
            return
        }
        guard let number = SegmentFile.number(fromName: name) else { throw error }
        let segments = try fileSystem.listDirectory(directory).compactMap(SegmentFile.number(fromName:)).sorted()
        let offset = error.offset ?? 0
        let exists = segments.contains(number)
        if exists, offset >= UInt64(LogFormat.segmentHeaderSize) {
            try noteLost(inSegment: number, from: offset)
            try setAsideTail(of: name, from: offset, reason: error.message)
        } else if exists {
            try noteLost(inSegment: number, from: 0)
            try setAside(name, reason: error.message)
        }
        for later in segments where later > number {
            try noteLost(inSegment: later, from: 0)
            try setAside(SegmentFile.name(later), reason: "follows damage in segment \(number): a prefix of the commit order ends there")
        }
        // The log must go on somewhere: when nothing is left of it at or after the manifest's log
        // start, start it again, empty, where the manifest says.
        let names = try fileSystem.listDirectory(directory)
        guard case .current(let manifest) = try Manifest.read(in: directory, names: names, fileSystem: fileSystem) else {
            if !names.compactMap(SegmentFile.number(fromName:)).isEmpty { return }
            _ = try SegmentFile.create(number: 1, firstSequence: 1, in: directory, fileSystem: fileSystem)
            return
        }
        if !names.compactMap(SegmentFile.number(fromName:)).contains(where: { $0 >= manifest.logStart }) {
            _ = try SegmentFile.create(
                number: manifest.logStart, firstSequence: manifest.lastSequence + 1, in: directory, fileSystem: fileSystem)
        }
    }

    /// A manifest recovery refused (or one naming a table that is not there or does not open) is
    /// rebuilt from what is present, without `dropping`.
    private mutating func repairManifestAfter(_ error: EngineError, dropping table: UInt64? = nil) throws(EngineError) {
        let names = try fileSystem.listDirectory(directory)
        if let table, names.contains(TableFormat.name(table)) {
            try setAside(TableFormat.name(table), reason: error.message + " (its keys are lost)")
        }
        if names.contains(LogFormat.manifestName), table == nil {
            try setAside(LogFormat.manifestName, reason: error.message)
        }
        guard
            case .current(var manifest) = try? Manifest.read(
                in: directory, names: try fileSystem.listDirectory(directory), fileSystem: fileSystem)
        else {
            try repairManifestIfDamaged()
            return
        }
        if let table, let index = manifest.tables.firstIndex(where: { $0.number == table }) {
            manifest.tables.remove(at: index)
            try writeManifest(manifest)
        } else {
            try repairManifestIfDamaged()
        }
    }

    /// Reads every value of the open store; a key whose value cannot be read (its blob damaged
    /// or missing) is deleted in one commit, and its blob set aside.
    mutating func deleteUnreadableValues(of store: LogStore) throws(EngineError) {
        var unreadable: [[UInt8]] = []
        var blobs: Set<String> = []
        var cursor = try store.scan()
        while let entry = try cursor.next() {
            do throws(EngineError) {
                _ = try entry.value()
            } catch  where error.code == .corruption || error.code == .missingBlob || error.code == .unsupportedFormat {
                unreadable.append(entry.key)
                if let path = error.path, path.hasPrefix(directory + "/" + LogFormat.blobDirectoryName + "/") {
                    blobs.insert(String(path.dropFirst(directory.count + 1)))
                }
            }
        }
        guard !unreadable.isEmpty else { return }
        try store.write { batch in for key in unreadable { batch.delete(key) } }
        let present = fileSystem.listNames(directory + "/" + LogFormat.blobDirectoryName)
        for blob in blobs.sorted() where present.contains(String(blob.split(separator: "/").last!)) {
            try setAside(blob, reason: "blob damaged: the keys whose value it held were deleted")
        }
        lostKeys += unreadable
        report.deletedKeys = unreadable.sorted { compareBytes($0, $1) < 0 }
    }
}

extension String {
    /// The name with `/` replaced, for a flat `quarantine/` folder (`blobs/x.blob` → `blobs_x.blob`).
    fileprivate func replacingSlashes() -> String { String(map { $0 == "/" ? "_" : $0 }) }
}
