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
        /// Commits known to be lost: from the first one dropped to the highest seen in the bytes
        /// set aside (nil when no commit was dropped). Damage can hide later ones.
        public var lostSequences: ClosedRange<UInt64>?
        /// Keys whose latest version salvage knows it lost (from verified frames in the bytes set
        /// aside, from hint files that list what a damaged file held, and from values that could
        /// not be read), ascending. Damage can hide others: ``quarantined`` says where.
        public var lostKeys: [[UInt8]] = []
        /// Keys deleted by salvage because their value could not be read (a damaged or missing
        /// blob); they are in ``lostKeys`` too.
        public var deletedKeys: [[UInt8]] = []

        /// True when salvage found nothing damaged.
        public var isClean: Bool { quarantined.isEmpty && lostKeys.isEmpty }
    }

    /// Repairs a store that ``open(at:options:)`` refuses as ``EngineError/Code/corruption``,
    /// keeping everything intact and moving every damaged or dropped byte range into the store's
    /// `quarantine/` folder (nothing is deleted), and returns what it kept and lost. Then open the
    /// store as usual. Never run implicitly: a store is salvaged only when this is called.
    ///
    /// What it keeps: the longest prefix of the commit order the log still holds intact (the
    /// first damaged frame and everything after it are set aside, since a prefix cannot skip a
    /// commit), every intact block of every pack (a damaged pack is rewritten from its intact
    /// blocks under a new number), and every value whose blob is intact (a key whose blob is
    /// damaged or missing is deleted, in one commit). Segment hints are rebuilt; one that records
    /// frames its segment lost is set aside, and its keys reported. A damaged manifest is set
    /// aside and rebuilt from the packs and segments present (a pack left by a compaction whose
    /// clean-up was interrupted is then kept too, and may bring back keys it had replaced; and if
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
        } catch where error.errno == Syscall.noSuchFile {
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
            try salvage.repairManifestIfDamaged()
            try salvage.repairPacks(options: options)
            let kept = try salvage.recoverLongestPrefix()
            salvage.report.lastKeptSequence = kept
            // The first commit dropped is the one after the prefix, even when its frame was too
            // damaged to read.
            if let highest = salvage.highestLostSequence, highest > kept { salvage.report.lostSequences = kept + 1...highest }
        } catch {
            lock.unlock()
            throw error
        }
        lock.unlock()
        // The last pass reads every value through an open store: what is left unreadable is in a
        // blob (the frames and packs were verified above).
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
    /// The highest commit seen in the frames set aside.
    var highestLostSequence: UInt64?
    private var quarantineReady = false

    init(directory: String, fileSystem: any FileSystem) {
        self.directory = directory
        self.fileSystem = fileSystem
    }

    static let quarantineName = "quarantine"
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
        let saved = try freshName(name + "@\(offset)")
        let copy = try fileSystem.openFile(quarantine + "/" + saved, create: true)
        var position = offset
        while position < size {
            let count = Int(min(UInt64(1 << 20), size - position))
            try copy.write(try file.read(at: position, count: count), at: position - offset)
            position += UInt64(count)
        }
        try copy.sync()
        try fileSystem.syncDirectory(quarantine)
        try file.truncate(to: offset)
        try file.sync()
        report.quarantined.append(.init(file: name, range: offset..<size, savedAs: Self.quarantineName + "/" + saved, reason: reason))
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
            highestLostSequence = max(highestLostSequence ?? 0, frame.sequence)
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

    /// The keys of a contradicted hint's entries whose records lie past `size` bytes.
    private mutating func noteKeysPast(_ size: UInt64, inHint name: String, number: UInt64) {
        // Loaded as the newest segment's of unbounded size: the check it failed is the length.
        guard let file = try? fileSystem.openFile(directory + "/" + name, create: false),
            let hint = try? SegmentHint.load(file, number: number, fileSize: .max, isNewest: true, firstSequence: nil)
        else { return }
        lostKeys += hint.puts.filter { $0.location.blockOffset + UInt64($0.location.blockLength) > size }.map(\.key)
        // Deletes carry no location: the last frame lost tells which of them went with it.
        let lastKept = hint.puts.filter { $0.location.blockOffset + UInt64($0.location.blockLength) <= size }
            .map(\.location.sequence).max() ?? 0
        lostKeys += hint.deletes.filter { $0.sequence > lastKept }.map(\.key)
    }

    /// A manifest that fails its checks is set aside and rebuilt from what is present: every
    /// finished pack, and the log from the oldest segment, whose header says which commit it
    /// continues from.
    mutating func repairManifestIfDamaged() throws(EngineError) {
        let names = try fileSystem.listDirectory(directory)
        do throws(EngineError) {
            guard let manifest = try Manifest.read(in: directory, names: names, fileSystem: fileSystem) else { return }
            let present = Set(names)
            if let missing = manifest.packs.first(where: { !present.contains(PackFile.name($0)) }) {
                throw .corruption("pack \(PackFile.name(missing)) is missing", path: directory, offset: 0)
            }
            return
        } catch where error.code == .corruption {
            if names.contains(LogFormat.manifestName) {
                try setAside(LogFormat.manifestName, reason: error.message)
            }
        }
        let packs = names.compactMap { name in PackFile.number(fromName: name).flatMap { PackFile.name($0) == name ? $0 : nil } }.sorted()
        var sizes: [UInt64] = []
        for pack in packs { sizes.append(try fileSystem.openFile(directory + "/" + PackFile.name(pack), create: false).size()) }
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
        let manifest = Manifest(logStart: logStart, lastSequence: lastSequence, packs: packs, packSizes: sizes)
        try writeManifest(manifest)
    }

    private func writeManifest(_ manifest: Manifest) throws(EngineError) {
        let temporary = directory + "/" + LogFormat.manifestTemporaryName
        try HintFile.writeSynced(manifest.encoded(), to: temporary, fileSystem: fileSystem)
        try fileSystem.rename(temporary, to: directory + "/" + LogFormat.manifestName)
        try fileSystem.syncDirectory(directory)
    }

    /// Verifies every block of every pack the manifest lists, and its length. A pack with a damaged
    /// block (or of another length than recorded) is rewritten from its intact blocks under a new
    /// number, the manifest switched to it, and the old pack and its hint set aside; the keys its
    /// hint lists in the lost blocks are reported.
    mutating func repairPacks(options: LogStore.Options) throws(EngineError) {
        let names = try fileSystem.listDirectory(directory)
        guard var manifest = try Manifest.read(in: directory, names: names, fileSystem: fileSystem) else { return }
        var nextNumber = (names.compactMap(PackFile.number(fromName:)).max() ?? 0) + 1
        for (index, number) in manifest.packs.enumerated() {
            let path = directory + "/" + PackFile.name(number)
            let file = try fileSystem.openFile(path, create: false)
            let size = try file.size()
            var intact: [(key: [UInt8], sequence: UInt64, value: ArraySlice<UInt8>?, blob: BlobReference?)] = []
            var damage: [String] = []
            if size != manifest.packSizes[index] {
                damage.append("pack is \(size) bytes but the manifest records \(manifest.packSizes[index])")
            }
            do throws(EngineError) {
                try PackFile.checkHeader(of: file, number: number)
            } catch where error.code == .corruption {
                damage.append(error.message)
            }
            var keptBlocks: [UInt64] = []
            try Self.forEachIntactBlock(of: file, size: size, damage: &damage) { offset, raw, records in
                keptBlocks.append(offset)
                for record in records {
                    let value = record.blob == nil ? raw[record.valueOffset..<record.valueOffset + record.valueLength!] : nil
                    intact.append((record.key, record.sequence!, value, record.blob))
                }
            }
            guard !damage.isEmpty else { continue }
            // What the hint says the pack held, where it can still be read: the keys not kept.
            if let hint = try? fileSystem.openFile(directory + "/" + PackFile.hintName(number), create: false),
                let entries = try? HintFile.load(hint, packNumber: number, packSize: manifest.packSizes[index]) {
                let kept = Set(intact.map { HashedKey($0.key) })
                lostKeys += entries.map(\.key).filter { !kept.contains(HashedKey($0)) }
            }
            let replacement = nextNumber
            nextNumber += 1
            var writer = try PackWriter(
                number: replacement, directory: directory, level: options.compressionLevel, blockSize: options.blockSize,
                fileSystem: fileSystem)
            intact.sort { compareBytes($0.key, $1.key) < 0 }
            for record in intact {
                try writer.add(key: record.key, sequence: record.sequence, value: record.value, blob: record.blob)
            }
            let entries = try writer.finish()
            let hint = try HintFile.writeTemporary(entries, packNumber: replacement, directory: directory, fileSystem: fileSystem)
            try fileSystem.rename(writer.temporaryPath, to: directory + "/" + PackFile.name(replacement))
            try fileSystem.rename(hint.path, to: directory + "/" + PackFile.hintName(replacement))
            try fileSystem.syncDirectory(directory)
            manifest.packs[index] = replacement
            manifest.packSizes[index] = writer.size
            try writeManifest(manifest)
            try setAside(PackFile.name(number), reason: damage.joined(separator: "; ") + " (its intact blocks are in pack \(replacement))")
            if names.contains(PackFile.hintName(number)) {
                try setAside(PackFile.hintName(number), reason: "the hint of a pack set aside")
            }
        }
    }

    /// Calls `body` with each block of a pack that passes its checks, looking for the next one at
    /// every byte offset after a damaged one; `damage` gets a line per damaged stretch.
    private static func forEachIntactBlock(
        of file: any StoreFile, size: UInt64, damage: inout [String],
        _ body: (UInt64, [UInt8], [RecordPlacement]) throws(EngineError) -> Void
    ) throws(EngineError) {
        var offset = UInt64(LogFormat.segmentHeaderSize)
        var damagedFrom: UInt64?
        let bytes = size <= UInt64(Int.max) ? try file.read(at: 0, count: Int(size)) : []
        while offset + UInt64(LogFormat.blockHeaderSize) <= UInt64(bytes.count) {
            let start = Int(offset)
            let stored = Int(loadUInt32(bytes[...], at: start + 4))
            let end = start + LogFormat.blockHeaderSize + stored
            var records: [RecordPlacement] = []
            if end <= bytes.count,
                let raw = try? CommitDecoding.block(
                    header: bytes[start..<start + LogFormat.blockHeaderSize],
                    stored: bytes[start + LogFormat.blockHeaderSize..<end], path: file.path, offset: offset),
                (try? CommitDecoding.parseRecords(
                    raw, blockOffset: 0, blockLength: end - start, into: &records, limit: Int.max, withSequence: true,
                    fail: { message, _ in .corruption(message, path: file.path, offset: offset) })) != nil
            {
                if let from = damagedFrom {
                    damage.append("bytes \(from)..<\(offset) of the pack are damaged")
                    damagedFrom = nil
                }
                try body(offset, raw, records)
                offset = UInt64(end)
            } else {
                if damagedFrom == nil { damagedFrom = offset }
                offset += 1
            }
        }
        if let from = damagedFrom ?? (offset < UInt64(bytes.count) ? offset : nil) {
            damage.append("bytes \(from)..<\(bytes.count) of the pack are damaged")
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
                    directory: directory, blobDirectory: directory + "/" + LogFormat.blobDirectoryName, fileSystem: fileSystem)
                return log.lastSequence
            } catch where error.code == .corruption {
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
        if let number = PackFile.number(fromName: name), !name.hasSuffix(LogFormat.temporarySuffix), name.hasSuffix(LogFormat.packSuffix) {
            // A listed pack that is missing or whose header is not ours.
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
        let manifest = try Manifest.read(in: directory, names: names, fileSystem: fileSystem) ?? Manifest()
        if !names.compactMap(SegmentFile.number(fromName:)).contains(where: { $0 >= manifest.logStart }) {
            _ = try SegmentFile.create(
                number: manifest.logStart, firstSequence: manifest.lastSequence + 1, in: directory, fileSystem: fileSystem)
        }
    }

    /// A manifest recovery refused (or one naming a pack that is not there) is rebuilt from what
    /// is present, without `dropping`.
    private mutating func repairManifestAfter(_ error: EngineError, dropping pack: UInt64? = nil) throws(EngineError) {
        let names = try fileSystem.listDirectory(directory)
        if let pack, names.contains(PackFile.name(pack)) {
            try setAside(PackFile.name(pack), reason: error.message)
            if names.contains(PackFile.hintName(pack)) { try setAside(PackFile.hintName(pack), reason: "the hint of a pack set aside") }
        }
        if names.contains(LogFormat.manifestName), pack == nil {
            try setAside(LogFormat.manifestName, reason: error.message)
        }
        guard var manifest = (try? Manifest.read(in: directory, names: try fileSystem.listDirectory(directory), fileSystem: fileSystem)) ?? nil else {
            try repairManifestIfDamaged()
            return
        }
        if let pack, let index = manifest.packs.firstIndex(of: pack) {
            manifest.packs.remove(at: index)
            manifest.packSizes.remove(at: index)
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
        for entry in try store.scan() {
            do throws(EngineError) {
                _ = try entry.value()
            } catch where error.code == .corruption || error.code == .missingBlob || error.code == .unsupportedFormat {
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
