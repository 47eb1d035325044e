import Engine

/// The record layer's keys of one **generation** in the engine's key space (FORMAT.md,
/// "Generations"): generation 0 keeps them as they are (`R`…, `A`…, …); generation *g* ≥ 1
/// keeps each under the prefix `01` + *g* (4 bytes big-endian). Only the record layer's own
/// kinds (`R A B C M N I U`) are prefixed; every other key (the header, other layers' keys) is
/// passed through unchanged.
///
/// A migration writes the new generation beside the live one and switches the header to it in
/// one commit, so readers of one generation never see another's keys. The record layer reads
/// and writes through this type with unprefixed keys, as if it were the only generation:
/// lookups prefix the key, scans prefix their range and strip the prefix from the keys they
/// return, commits prefix every key of the batch.
struct RecordSpace: Sendable {
    /// The tag byte that opens the keys of generations above 0.
    static let generationTag: UInt8 = 0x01

    let engine: LogStore
    let generation: UInt32
    /// Empty for generation 0.
    let prefix: [UInt8]
    /// Writes planned and not yet committed (in engine keys), read on top of the engine's (a
    /// save planned while earlier saves' commit is being written); none for every other reader.
    var pending = PendingWrites.none

    init(engine: LogStore, generation: UInt32) {
        self.engine = engine
        self.generation = generation
        self.prefix = Self.prefix(of: generation)
    }

    static func prefix(of generation: UInt32) -> [UInt8] {
        guard generation > 0 else { return [] }
        return [generationTag] + (0..<4).map { UInt8(truncatingIfNeeded: generation >> (24 - 8 * UInt32($0))) }
    }

    /// The record layer's key kinds: the keys a generation holds.
    static let recordTags: [UInt8] = [
        RecordKeys.assetTag, RecordKeys.backReferenceTag, RecordKeys.countTag, RecordKeys.indexTag, RecordKeys.joinTag, RecordKeys.joinMirrorTag,
        RecordKeys.recordTag, RecordKeys.uniqueTag,
    ]

    static func isRecordKey(_ key: [UInt8]) -> Bool {
        guard let first = key.first else { return false }
        return recordTags.contains(first)
    }

    /// `key` as the engine stores it in this generation.
    func engineKey(_ key: [UInt8]) -> [UInt8] { Self.engineKey(key, prefix: prefix) }

    /// `key` as the engine stores it under the generation prefix `prefix`.
    static func engineKey(_ key: [UInt8], prefix: [UInt8]) -> [UInt8] {
        prefix.isEmpty || !isRecordKey(key) ? key : prefix + key
    }

    func value(forKey key: [UInt8]) throws(EngineError) -> [UInt8]? {
        let key = engineKey(key)
        switch pending.value(forKey: key) {
        case .put(let value, _)?: return value
        case .deleted?: return nil
        case nil: return try engine.value(forKey: key)
        }
    }

    /// Looks `key` up and lends its value's bytes to `body` (valid only during the call): a
    /// pending write's bytes, or the engine's in place (``LogStore/withValue(forKey:_:)``).
    /// `nil` when the key is absent.
    func withValue<Result>(forKey key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result? {
        let key = engineKey(key)
        switch pending.value(forKey: key) {
        case .put(let value, _)?: return try value.withUnsafeBytes(body)
        case .deleted?: return nil
        case nil: return try engine.withValue(forKey: key, body)
        }
    }

    /// ``value(forKey:)`` for each of `keys`, in order: the pending writes answer first, the
    /// rest is one batched engine read (``LogStore/values(forKeys:)``).
    func values(forKeys keys: [[UInt8]]) throws(EngineError) -> [[UInt8]?] {
        var values = [[UInt8]?](repeating: nil, count: keys.count)
        var asked: [Int] = []
        var engineKeys: [[UInt8]] = []
        for (position, key) in keys.enumerated() {
            let key = engineKey(key)
            switch pending.value(forKey: key) {
            case .put(let value, _)?: values[position] = value
            case .deleted?: break
            case nil:
                asked.append(position)
                engineKeys.append(key)
            }
        }
        for (position, value) in zip(asked, try engine.values(forKeys: engineKeys)) { values[position] = value }
        return values
    }

    func commit(_ batch: WriteBatch) throws(EngineError) {
        _ = try engine.commit(engineBatch(batch))
    }

    /// `batch` (of unprefixed record keys) as the engine stores it in this generation.
    func engineBatch(_ batch: WriteBatch) -> WriteBatch {
        prefix.isEmpty ? batch : batch.mappingKeys(engineKey)
    }

    func scan(prefix keyPrefix: [UInt8]) throws(EngineError) -> Scan {
        try scan(.prefix(keyPrefix))
    }

    /// The keys of this generation in `range` (of unprefixed record keys), as
    /// ``LogStore/scan(_:limit:reverse:)``; the pending writes are laid over the store by the
    /// engine's own merge (``LogStore/scan(_:limit:reverse:overlay:)``).
    func scan(_ range: LogStore.KeyRange, limit: Int? = nil, reverse: Bool = false) throws(EngineError) -> Scan {
        let mapped = engineRange(range)
        let overlay: [LogStore.Scan.OverlayEntry] =
            pending.isEmpty
            ? []
            : pending.entries(in: mapped, reverse: reverse).map { entry in
                switch entry.value {
                case .put(let bytes, let external): LogStore.Scan.OverlayEntry(key: entry.key, value: bytes, isBlob: external)
                case .deleted: LogStore.Scan.OverlayEntry(key: entry.key, value: nil)
                }
            }
        return Scan(
            base: try engine.scan(mapped, limit: limit, reverse: reverse, overlay: overlay), generationPrefix: prefix)
    }

    /// `range` (of unprefixed record keys) as the engine's keys of this generation.
    private func engineRange(_ range: LogStore.KeyRange) -> LogStore.KeyRange {
        guard !prefix.isEmpty else { return range }
        func bound(_ b: LogStore.KeyRange.Bound, upper: Bool) -> LogStore.KeyRange.Bound {
            switch b {
            case .inclusive(let k): .inclusive(prefix + k)
            case .exclusive(let k): .exclusive(prefix + k)
            case .unbounded:
                upper ? LogStore.KeyRange.prefix(prefix).upper : .inclusive(prefix)
            }
        }
        return LogStore.KeyRange(lower: bound(range.lower, upper: false), upper: bound(range.upper, upper: true))
    }

    /// A scan of one generation: the engine's scan (with the pending writes laid over it) with
    /// the generation prefix stripped, a cursor as ``LogStore/Scan`` is (its ``next()`` throws
    /// what the engine's does).
    struct Scan {
        var base: LogStore.Scan
        /// The generation's prefix (empty for generation 0).
        let generationPrefix: [UInt8]
        private var prefixLength: Int { generationPrefix.count }

        mutating func next() throws(EngineError) -> Entry? {
            guard let raw = try base.next() else { return nil }
            return Entry(key: prefixLength == 0 ? raw.key : Array(raw.key.dropFirst(prefixLength)), raw: raw)
        }

        /// Lends the next entry to `body`: its key without the generation prefix and the
        /// engine's entry (whose value `body` reads in place), both valid only during the call;
        /// `nil` after the last.
        mutating func withNext<Result>(
            _ body: (_ key: UnsafeRawBufferPointer, _ entry: LogStore.Scan.BorrowedEntry) throws(EngineError) -> Result
        ) throws(EngineError) -> Result? {
            let prefixLength = prefixLength
            return try base.withNext { entry throws(EngineError) in
                try body(prefixLength == 0 ? entry.key : UnsafeRawBufferPointer(rebasing: entry.key[prefixLength...]), entry)
            }
        }

        /// Moves the (forward) scan to its first key at or above `key` (without the generation
        /// prefix): ``LogStore/Scan/seek(to:)``.
        mutating func seek(to key: [UInt8]) throws(EngineError) {
            try base.seek(to: RecordSpace.engineKey(key, prefix: generationPrefix))
        }

        /// One key of the scan, without the generation prefix.
        struct Entry {
            let key: [UInt8]
            let raw: LogStore.Scan.Entry
            var isBlob: Bool { raw.isBlob }
            func value() throws(EngineError) -> [UInt8] { try raw.value() }
        }
    }
}
