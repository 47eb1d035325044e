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
        /// The last (highest) commit the store now holds. Every commit after it is lost; commits
        /// before it may be lost too when damage lay between intact ones
        /// (``lostSequenceRanges``).
        public var lastKeptSequence: UInt64 = 0
        /// Commits known to be lost, exactly: ascending, disjoint ranges of sequence numbers.
        /// Salvage keeps every commit whose frame is intact, also after a damaged one, so a range
        /// may lie between kept commits (a damaged frame in the middle of the log), or run past
        /// ``lastKeptSequence`` up to the highest commit known to have been durable — seen in the
        /// bytes set aside, recorded by a segment hint (a sealed segment's, or the newest one's at
        /// a clean close), by the next segment's header, or by the manifest's recorded log end. A
        /// damaged last commit of a cleanly closed store is reported so, though open would cut it
        /// like a torn write. Damage can hide later ones.
        public var lostSequenceRanges: [ClosedRange<UInt64>] = []
        /// The span of ``lostSequenceRanges``: from the first commit lost to the last (nil when
        /// none is). Commits inside it may have been kept; the ranges say which were not.
        public var lostSequences: ClosedRange<UInt64>? {
            guard let first = lostSequenceRanges.first, let last = lostSequenceRanges.last else { return nil }
            return first.lowerBound...last.upperBound
        }
        /// The lost commits whose keys salvage could not learn (no segment hint described them,
        /// and their frames could not be read), as ranges within ``lostSequenceRanges``: the keys
        /// they wrote are missing from ``lostKeys``. Empty when every lost commit's keys are known.
        public var lostSequencesWithUnknownKeys: [ClosedRange<UInt64>] = []
        /// True when a kept commit follows a lost one. The kept commit's effects may depend on the
        /// lost one — a value computed from one the lost commit wrote, an entry that refers to a
        /// key it created — which the engine cannot know: a layer above that keeps derived data
        /// (indexes, counts, references) should check or rebuild it.
        public var laterCommitsMayDependOnLostOnes = false
        /// Keys whose latest version salvage knows it lost (from verified frames in the bytes set
        /// aside, from hint files that list what a damaged file held, and from values that could
        /// not be read), ascending. Damage can hide others: ``quarantined`` says where. The keys
        /// of a table's damaged data block are never known (the block cannot be read).
        public var lostKeys: [[UInt8]] = []
        /// Keys deleted by salvage because their value could not be read (a damaged or missing
        /// blob); they are in ``lostKeys`` too.
        public var deletedKeys: [[UInt8]] = []

        /// True when salvage found nothing damaged and lost nothing.
        public var isClean: Bool { quarantined.isEmpty && lostKeys.isEmpty && lostSequenceRanges.isEmpty }
    }

    /// The name of the folder, inside a store's directory, that ``salvage(at:options:)`` moves
    /// damaged and dropped bytes into. Its presence says the store was salvaged with damage.
    public static let quarantineDirectoryName = "quarantine"

    /// Repairs a store that ``open(at:options:)`` refuses as ``EngineError/Code/corruption``,
    /// keeping everything intact and moving every damaged or dropped byte range into the store's
    /// `quarantine/` folder (nothing is deleted), and returns what it kept and lost. Then open the
    /// store as usual. Never run implicitly: a store is salvaged only when this is called.
    ///
    /// What it keeps: every commit of the log whose frame passes its checks, in sequence order,
    /// also after a damaged frame or a segment cut short (salvage finds the next frame past the
    /// damage, and reads every later segment). When the commits kept are not a prefix of the
    /// commit order, they are written into a new table (the newest version of each key) and the
    /// log starts again, empty, after the last of them (FORMAT.md, "Salvage of the log"); the report then
    /// lists each range of commits lost
    /// (``SalvageReport/lostSequenceRanges``), the keys of those a segment hint or frame
    /// describes, and that kept commits may depend on lost ones
    /// (``SalvageReport/laterCommitsMayDependOnLostOnes``). Also kept: every entry of every
    /// intact data block of every table (a damaged table — a data
    /// block, its footer, filter or index, the file cut short — is rewritten from its intact
    /// blocks under a new number, found by its index or, when that is unreadable, by walking the
    /// blocks' crc32s; the keys of its damaged blocks cannot be read, so they are not reported,
    /// and older versions of them in older tables may show again), and every value
    /// whose blob is intact (a key whose blob is
    /// damaged or missing is deleted, in one commit). Segment hints are rebuilt; one that records
    /// frames its segment lost is set aside, and its keys reported. A damaged manifest, or a
    /// missing one beside tables, is set aside and rebuilt from the tables and segments present,
    /// newest (highest number) first (a
    /// table left by a merge whose clean-up was interrupted is then kept too, and may bring back
    /// keys it had replaced; and if
    /// the oldest segment's header is damaged as well, that segment is set aside and the log
    /// resumes at the next one whose header is intact). A manifest whose last sequence is below
    /// a sequence its tables hold is copied aside and raised to it.
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
            try salvage.checkLastSequenceAgainstTables()
            try salvage.recoverLog(options: options)
            salvage.reportLostCommits()
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
    /// by a segment hint, a segment header or the manifest's log end. Those the kept commits do
    /// not include are reported lost.
    var highestKnownSequence: UInt64?
    /// The hints that passed their checks (or were set aside as contradicted), by segment: what
    /// they record tells the keys of lost commits.
    var hints: [UInt64: SegmentHint] = [:]
    /// Lost commits whose keys were read from their verified frames.
    var lostSequencesWithKnownKeys: [ClosedRange<UInt64>] = []
    /// The highest sequence any entry of a listed table carries (after ``repairTables(options:)``).
    var tableMaxSequence: UInt64 = 0
    /// The commits of the log that salvage examined: after `base` (the last the tables hold), the
    /// `kept` ones. Set once the log recovers.
    var logBase: UInt64 = 0
    var keptSequences: [ClosedRange<UInt64>] = []
    /// For the log rewritten into a table: each key's last kept sequence, so that a lost commit's
    /// key that a later kept commit wrote again is not reported lost.
    var keptKeySequences: [HashedKey: UInt64] = [:]
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
                lostSequencesWithKnownKeys.append(frame.sequence...frame.sequence)
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
                hints[number] = hint
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
        hints[number] = hint
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

    /// A manifest that fails its checks (or is missing while tables lie beside a log that no longer
    /// starts at segment 1) is set aside and rebuilt from what is present: every
    /// finished table whose entries can all be read (newest, by number, first), and the log from
    /// the oldest segment, whose header says which commit it continues from.
    mutating func repairManifestIfDamaged() throws(EngineError) {
        let names = try fileSystem.listDirectory(directory)
        do throws(EngineError) {
            let stored = try Manifest.read(in: directory, names: names, fileSystem: fileSystem)
            guard case .current(let manifest) = stored else {
                // Without a manifest, tables beside a log that no longer starts at segment 1 mean
                // the manifest was lost (open refuses the store): it is rebuilt below.
                guard case .none = stored, !names.contains(SegmentFile.name(1)),
                    names.contains(where: { name in StoreTable.number(fromName: name).map { TableFormat.name($0) == name } ?? false })
                else { return }
                throw .corruption("the manifest is missing", path: directory + "/" + LogFormat.manifestName, offset: 0)
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

    /// Writes `entries` (ascending) as table `number` of `level` under its temporary name, then
    /// renames it into place and syncs the directory: durable before a manifest names it.
    private func writeTable(
        number: UInt64, level: UInt32, entries: [TableEntry], options: LogStore.Options
    ) throws(EngineError)
        -> Manifest.Table
    {
        var writer = try TableWriter(number: number, level: level, directory: directory, options: options, fileSystem: fileSystem)
        let written: Manifest.Table
        do throws(EngineError) {
            for entry in entries { try writer.add(entry) }
            written = try writer.finish()
        } catch {
            writer.discard()
            throw error
        }
        try fileSystem.rename(writer.temporaryPath, to: writer.finalPath)
        try fileSystem.syncDirectory(directory)
        return written
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
            tableMaxSequence = max(tableMaxSequence, kept.entries.lazy.map(\.sequence).max() ?? 0)
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
                manifest.tables[index] = try writeTable(number: replacement, level: record.level, entries: kept.entries, options: options)
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

    /// A manifest whose last sequence is below a sequence one of its tables holds says the tables
    /// end before commits they hold: the log would then resume at a commit already flushed, and
    /// a salvage that trusted it would leave a store whose tables are ahead of its log. Every
    /// table's entries were read by ``repairTables(options:)``; the manifest is copied into
    /// `quarantine/` and its last sequence raised to the highest sequence a table holds (the log
    /// is then read from there on, and commits it lacks are reported lost).
    mutating func checkLastSequenceAgainstTables() throws(EngineError) {
        let names = try fileSystem.listDirectory(directory)
        guard case .current(var manifest) = try Manifest.read(in: directory, names: names, fileSystem: fileSystem),
            tableMaxSequence > manifest.lastSequence
        else { return }
        let size = try fileSystem.openFile(directory + "/" + LogFormat.manifestName, create: false).size()
        try copyAside(
            range: 0..<size, of: LogFormat.manifestName,
            reason:
                "the manifest's last sequence \(manifest.lastSequence) is below sequence \(tableMaxSequence), which a table holds (its last sequence is raised to it)"
        )
        manifest.lastSequence = tableMaxSequence
        try writeManifest(manifest)
    }

    /// Runs recovery until it succeeds. The first corruption it reports in the log (a segment)
    /// makes salvage read the whole log (``resynchroniseLog(options:)``): when an intact commit
    /// follows damage or a gap, every intact commit is kept. Otherwise, and for the other
    /// corruptions, what the error names is set aside: the damaged frame of a segment and
    /// everything after it in the log (every later segment, none of which holds an intact
    /// commit then), or a segment whose header is damaged or does not continue the log, and every
    /// later one. Sets the report's last kept sequence.
    mutating func recoverLog(options: LogStore.Options) throws(EngineError) {
        var previous: String?
        var resynchronised = false
        var rewritten = false
        while true {
            do throws(EngineError) {
                let log = try RecoveredLog.recover(
                    directory: directory, blobDirectory: directory + "/" + LogFormat.blobDirectoryName, fileSystem: fileSystem,
                    options: LogStore.Options(), tableCache: TableBlockCache(capacity: 0))
                if !rewritten {
                    // The log recovered is a prefix: every commit after the tables' last to its end.
                    logBase = log.manifest.lastSequence
                    keptSequences = log.lastSequence > logBase ? [logBase + 1...log.lastSequence] : []
                }
                report.lastKeptSequence = log.lastSequence
                return
            } catch  where error.code == .corruption {
                // Each pass sets aside what the last one named; the same error twice means it could
                // not, and another pass would not get further.
                guard error.description != previous else { throw error }
                previous = error.description
                if !resynchronised, isInTheLog(error) {
                    resynchronised = true
                    rewritten = try resynchroniseLog(options: options)
                    if rewritten { continue }
                }
                try setAside(after: error)
            }
        }
    }

    /// True when `error` names a segment file.
    private func isInTheLog(_ error: EngineError) -> Bool {
        guard let path = error.path, path.hasPrefix(directory + "/") else { return false }
        return SegmentFile.number(fromName: String(path.dropFirst(directory.count + 1))) != nil
    }

    /// Reads every segment from the manifest's log start, keeping every commit frame that passes
    /// its checks and carries a sequence above the last one kept, and finding the next frame past
    /// any damage (``LogScan``). When a kept commit follows damage or a gap in the sequences, the
    /// log cannot stay a log (its sequences must run on without gaps): the kept commits' entries
    /// are written, newest version of each key, into a new table, the damaged byte ranges are
    /// copied into `quarantine/`, and the manifest switched to the new table and a new, empty
    /// segment after every present one, whose first commit follows the last kept one. The old
    /// segments are then below the log start: leftovers that open removes. Returns false, having
    /// changed nothing, when the intact commits are a prefix (what recovery's error names is set
    /// aside then).
    ///
    /// Crash safety: the copies, the table and the segment are durable before the manifest names
    /// them. Power loss before the manifest's rename leaves the old manifest and log (the new table
    /// and segment unlisted or empty), and salvage reads the same commits again.
    mutating func resynchroniseLog(options: LogStore.Options) throws(EngineError) -> Bool {
        let names = try fileSystem.listDirectory(directory)
        var manifest = Manifest()
        if case .current(let current) = try Manifest.read(in: directory, names: names, fileSystem: fileSystem) { manifest = current }
        var scan = LogScan(base: manifest.lastSequence)
        // Segments below the log start too: a flush's leftovers hold only commits the tables hold
        // (passed over), but a manifest whose log start is too high disowns commits they alone hold.
        for number in names.compactMap(SegmentFile.number(fromName:)).sorted() {
            try scan.read(segment: number, belowLogStart: number < manifest.logStart, directory: directory, fileSystem: fileSystem)
        }
        if let highest = scan.highestSeen { highestKnownSequence = max(highestKnownSequence ?? 0, highest) }
        guard scan.keptAfterLoss || scan.keptBelowLogStart else { return false }

        for damage in scan.damage { try copyAside(range: damage.range, of: damage.file, reason: damage.reason) }
        // Nothing is older than the tables: a tombstone matters only when a table could hold its key.
        let entries = scan.entries.values.filter { !manifest.tables.isEmpty || $0.value != .tombstone }
            .sorted { compareBytes($0.key, $1.key) < 0 }
        var tables = manifest.tables
        if !entries.isEmpty {
            let number = (names.compactMap(StoreTable.number(fromName:)).max() ?? 0) + 1
            tables.insert(try writeTable(number: number, level: 0, entries: entries, options: options), at: 0)
        }
        let segment = (names.compactMap(SegmentFile.number(fromName:)).max() ?? 0) + 1
        _ = try SegmentFile.create(number: segment, firstSequence: scan.lastKept + 1, in: directory, fileSystem: fileSystem)
        try writeManifest(Manifest(logStart: segment, lastSequence: scan.lastKept, tables: tables))
        logBase = manifest.lastSequence
        keptSequences = scan.kept
        keptKeySequences = scan.entries.mapValues(\.sequence)
        return true
    }

    /// Reports the commits lost — every commit after the tables' last up to the highest known,
    /// that the store does not hold — and the keys of those the segment hints (or their frames)
    /// describe.
    mutating func reportLostCommits() {
        let highest = max(highestKnownSequence ?? 0, report.lastKeptSequence)
        guard highest > logBase else { return }
        let lost = SequenceRanges.subtract(keptSequences, from: [logBase + 1...highest])
        report.lostSequenceRanges = lost
        report.laterCommitsMayDependOnLostOnes = lost.contains { $0.upperBound < report.lastKeptSequence }
        var described = lostSequencesWithKnownKeys
        for number in hints.keys.sorted() {
            let hint = hints[number]!
            guard hint.frameCount > 0 else { continue }
            described.append(hint.firstSequence...hint.firstSequence + hint.frameCount - 1)
            // A hint holds each key's last record in its segment: a key is lost when that record
            // was in a lost commit and no later commit kept writes the key again.
            func isLost(_ key: [UInt8], _ sequence: UInt64) -> Bool {
                SequenceRanges.contains(lost, sequence) && (keptKeySequences[HashedKey(key)] ?? 0) < sequence
            }
            lostKeys += hint.puts.filter { isLost($0.key, $0.location.sequence) }.map(\.key)
            lostKeys += hint.deletes.filter { isLost($0.key, $0.sequence) }.map(\.key)
        }
        report.lostSequencesWithUnknownKeys = SequenceRanges.subtract(SequenceRanges.normalized(described), from: lost)
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

/// What ``Salvage/resynchroniseLog(options:)`` finds reading the log's segments in order: every
/// commit frame that passes its checks (crc32, header, blocks, records) and carries a sequence
/// above the last one kept, and the byte ranges between them that hold none.
///
/// Past damage it looks for the next frame: right after a damaged frame whose header passed its own
/// crc32 (its length is true), else at every byte offset, the first where a frame passes its checks
/// with a sequence above the last kept. A frame inside another's bytes (a value that holds a frame)
/// could pass too; the sequence rule keeps such a frame only when it is newer than every commit
/// kept, and then it is a commit the log held.
struct LogScan {
    struct Damage {
        var file: String
        var range: Range<UInt64>
        var reason: String
    }

    /// The last commit the tables hold: kept commits come after it.
    let base: UInt64
    private(set) var lastKept: UInt64
    /// The sequences kept, ascending.
    private(set) var kept: [ClosedRange<UInt64>] = []
    /// Each key's newest kept version, with its commit's sequence.
    private(set) var entries: [HashedKey: TableEntry] = [:]
    private(set) var damage: [Damage] = []
    /// The highest commit the bytes show existed without keeping it: a damaged frame whose header
    /// held, a close frame, a segment header's first sequence (minus one).
    private(set) var highestSeen: UInt64?
    /// True once damage, or a gap in the sequences, was met.
    private var lossSeen = false
    /// True when a kept commit follows damage or a gap: the kept commits are not a prefix.
    private(set) var keptAfterLoss = false
    /// True when a commit was kept from a segment below the manifest's log start.
    private(set) var keptBelowLogStart = false

    init(base: UInt64) {
        self.base = base
        lastKept = base
    }

    private mutating func see(_ sequence: UInt64) {
        if sequence > lastKept { highestSeen = max(highestSeen ?? 0, sequence) }
    }

    /// Reads segment `number` (`belowLogStart`: a segment the manifest says was flushed).
    mutating func read(
        segment number: UInt64, belowLogStart: Bool, directory: String, fileSystem: any FileSystem
    ) throws(EngineError) {
        let name = SegmentFile.name(number)
        let file = try fileSystem.openFile(directory + "/" + name, create: false)
        var reader = try LogReader(file: file, segmentNumber: number, isNewest: false)
        let headerSize = UInt64(LogFormat.segmentHeaderSize)
        var firstSequence: UInt64?
        do throws(EngineError) {
            firstSequence = try SegmentFile.checkHeader(of: file, number: number)
        } catch  where error.code == .corruption {
            if reader.fileSize > 0 {
                damage.append(Damage(file: name, range: 0..<min(headerSize, reader.fileSize), reason: error.message))
            }
            lossSeen = true
        }
        guard reader.fileSize > headerSize else { return }
        let end = try reader.endOfNonZeroBytes()
        var position = headerSize
        var damageStart: UInt64?
        var damageReason = ""
        var firstFrame = true
        while position < end {
            var skipTo: UInt64?
            switch try reader.probe(at: position) {
            case .frame(let frame) where frame.isClose:
                // A close frame holds no commit; past damage, it is where the damage ends.
                if let start = damageStart {
                    damage.append(Damage(file: name, range: start..<position, reason: damageReason))
                    damageStart = nil
                }
                see(frame.sequence)
                position += UInt64(frame.bytes.count)
                continue
            case .frame(let frame) where !frame.isClose && frame.sequence <= base:
                // A commit the tables hold already (a flushed segment's).
                if let start = damageStart {
                    damage.append(Damage(file: name, range: start..<position, reason: damageReason))
                    damageStart = nil
                }
                firstFrame = false
                position += UInt64(frame.bytes.count)
                continue
            case .frame(let frame) where !frame.isClose && frame.sequence > lastKept:
                if let decoded = Self.decode(frame, path: file.path) {
                    if let start = damageStart {
                        damage.append(Damage(file: name, range: start..<position, reason: damageReason))
                        damageStart = nil
                    }
                    if firstFrame, let first = firstSequence, first != frame.sequence {
                        // The header disagrees with the frame after it: the header is what is wrong.
                        damage.append(
                            Damage(
                                file: name, range: 0..<headerSize,
                                reason: "segment header's first sequence \(first) disagrees with its first frame's \(frame.sequence)"))
                        firstSequence = nil
                    }
                    keep(frame.sequence, decoded)
                    if belowLogStart { keptBelowLogStart = true }
                    firstFrame = false
                    position += UInt64(frame.bytes.count)
                    continue
                }
                if damageStart == nil {
                    damageStart = position
                    damageReason = "commit \(frame.sequence)'s blocks or records are invalid"
                    see(frame.sequence)
                    skipTo = position + UInt64(frame.bytes.count)
                }
            case .damagedPayload(let sequence, let length) where damageStart == nil:
                damageStart = position
                damageReason = "frame checksum mismatch (commit \(sequence))"
                if sequence < LogFormat.maxSequence { see(sequence) }
                skipTo = position + length
            default:
                if damageStart == nil {
                    damageStart = position
                    damageReason = "no frame that passes its checks starts here"
                }
            }
            firstFrame = false
            lossSeen = true
            // Past a frame whose length can be trusted, the next frame starts right after it;
            // when none passes there, every byte offset is tried.
            if let skipTo, skipTo < end, case .frame(let next) = try reader.probe(at: skipTo), next.isClose || next.sequence > lastKept {
                position = skipTo
            } else if let skipTo, skipTo >= end {
                position = end
            } else {
                position += 1
            }
        }
        if let start = damageStart {
            damage.append(Damage(file: name, range: start..<reader.fileSize, reason: damageReason))
        }
        // A header's first sequence says the commits before it existed (when its frames agree).
        if let firstSequence, firstSequence > 0 { see(firstSequence - 1) }
    }

    private mutating func keep(_ sequence: UInt64, _ records: [(key: [UInt8], value: TableEntry.Value)]) {
        if sequence != lastKept + 1 { lossSeen = true }
        if lossSeen { keptAfterLoss = true }
        for record in records { entries[HashedKey(record.key)] = TableEntry(key: record.key, sequence: sequence, value: record.value) }
        if let last = kept.last, last.upperBound + 1 == sequence {
            kept[kept.count - 1] = last.lowerBound...sequence
        } else {
            kept.append(sequence...sequence)
        }
        lastKept = sequence
    }

    /// The records of a verified commit frame, in order, or nil when its blocks or records fail
    /// their checks.
    private static func decode(_ frame: LogReader.Frame, path: String) -> [(key: [UInt8], value: TableEntry.Value)]? {
        var records: [(key: [UInt8], value: TableEntry.Value)] = []
        do throws(EngineError) {
            _ = try CommitDecoding.records(inPayload: frame.payload, frameOffset: frame.offset, path: path) {
                raw, placed throws(EngineError) in
                for record in placed {
                    if let blob = record.blob {
                        records.append((record.key, .blob(blob)))
                    } else if let length = record.valueLength {
                        records.append((record.key, .value(Array(raw[record.valueOffset..<record.valueOffset + length]))))
                    } else {
                        records.append((record.key, .tombstone))
                    }
                }
            }
        } catch {
            return nil
        }
        return records
    }
}

/// Sorted, disjoint ranges of sequence numbers.
enum SequenceRanges {
    /// `ranges` sorted, with overlapping and adjacent ones merged.
    static func normalized(_ ranges: [ClosedRange<UInt64>]) -> [ClosedRange<UInt64>] {
        var merged: [ClosedRange<UInt64>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, range.lowerBound <= last.upperBound || range.lowerBound - last.upperBound == 1 {
                merged[merged.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }

    /// What of `ranges` (normalized) `removed` (normalized) does not cover.
    static func subtract(_ removed: [ClosedRange<UInt64>], from ranges: [ClosedRange<UInt64>]) -> [ClosedRange<UInt64>] {
        var result: [ClosedRange<UInt64>] = []
        for range in ranges {
            var low = range.lowerBound
            var done = false
            for cut in removed where !done && cut.upperBound >= low && cut.lowerBound <= range.upperBound {
                if cut.lowerBound > low { result.append(low...cut.lowerBound - 1) }
                if cut.upperBound >= range.upperBound {
                    done = true
                } else {
                    low = cut.upperBound + 1
                }
            }
            if !done { result.append(low...range.upperBound) }
        }
        return result
    }

    static func contains(_ ranges: [ClosedRange<UInt64>], _ value: UInt64) -> Bool {
        ranges.contains { $0.contains(value) }
    }
}

extension String {
    /// The name with `/` replaced, for a flat `quarantine/` folder (`blobs/x.blob` → `blobs_x.blob`).
    fileprivate func replacingSlashes() -> String { String(map { $0 == "/" ? "_" : $0 }) }
}
