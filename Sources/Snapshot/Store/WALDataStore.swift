import Engine
import Foundation
import Synchronization

/// A ``DataStore`` on the engine's ``LogStore``: every object is a record in the record shape
/// of Core Data's CloudKit mirroring, every relationship, index and uniqueness entry a key of
/// its own, and every save one atomic engine commit (FORMAT.md, "Records (the Snapshot layer)").
///
/// **Saves** (``save(_:)``) are checked whole before anything is written — unknown entities and
/// properties, value types, missing values, dangling, foreign and temporary identifiers,
/// relationship counts, deny rules — and a refused save leaves the store's files byte-identical.
/// Then inserts get UUID primary keys, an insert colliding with a stored object on a unique
/// attribute or constraint becomes an update of that object (an upsert), inverses and delete
/// rules are applied, and all of it, indexes included, is committed in one engine commit. When
/// `save` returns in the engine's default ``LogStore/SyncMode/durable`` mode, the whole save
/// survives power loss; in the weaker modes it is as durable as the engine's commit (all of it
/// or none of it, after a crash).
///
/// **Both sides of a relationship.** Each side a save states is compared with what is stored,
/// and only changes are applied. For a one-to-many relationship the to-one side is what is
/// stored: a change to the to-many side moves the targets that the save does not also state
/// themselves, and when a target states its to-one, **the to-one side wins**. For a
/// many-to-many relationship the changes of both sides are applied: a link either side adds is
/// added, a link either side removes is removed (a link cannot be both, since it is either
/// stored or not). For a one-to-one relationship the statements are applied in request order
/// (inserts, then updates), so the later one wins.
///
/// **Fetches** never answer `preferInMemoryFilter` or `preferInMemorySort`. A predicate with an
/// equality, range, `oneOf` list or prefix on the first property of a declared index (or
/// equalities on its first properties, then one of those on the next), or a sort by it with a
/// limit, reads through the index and decodes only the records it needs; any other fetch scans
/// the records of the entity's root. A count without predicate reads only the store's
/// per-entity counts. To-many arrays come back in a canonical order (entity
/// name, then primary key): to-many relationships are unordered, as SwiftData's are.
///
/// **Threads.** Calls are serialised by one lock, so each fetch sees one saved state. The
/// `async` variants run the same work on the engine's I/O threads. Saves that arrive
/// while another save is being written wait in a queue and share the next commit and its sync
/// (see ``save(_:)``).
public final class WALDataStore: DataStoreBatching {
    /// The snapshots it reads and writes.
    public typealias SnapshotType = DefaultSnapshot

    /// The configuration the store was opened with.
    public let configuration: WALStoreConfiguration
    /// The store's identifier, made at its first open and kept in its header record.
    public let identifier: String
    /// The entities it holds.
    public let schema: Schema
    /// How the schema's objects are laid out as keys, worked out once.
    let layout: RecordLayout
    /// The engine store underneath: for reading raw records. Writing to it directly bypasses
    /// every check and index.
    package let engine: LogStore
    /// The generation of record keys the store reads and writes (the header's live one).
    let space: RecordSpace
    /// Whether this is a custom migration stage's view of in-progress data: it neither closes
    /// the engine nor erases more than its own generation.
    let isMigrationContext: Bool
    /// Serialises saves, fetches and erases: each sees (and makes) one consistent state.
    let gate = NSLock()
    /// The saves waiting to share a commit (``WALDataStore/save(_:)``).
    package let coalescer = SaveCoalescer()
    /// The history of its saves (``fetchHistory(_:)``), recorded when the configuration asks.
    let history: HistoryLog
    /// Its observed fetches and transaction streams (``observe(_:)``).
    let observers = ObserverRegistry()
    /// How many objects of each entity its generation holds (the `C` keys).
    let counts: EntityCounts
    /// The background sweep of the generations the header does not name (`nil` in a custom
    /// migration stage's store).
    let sweep: BackgroundSweep?
    private let recordsReadCounter = Atomic<Int>(0)

    /// Opens (creating if needed) the store `configuration` describes, migrating it when it
    /// holds another schema.
    ///
    /// When it returns, the engine store is open and recovered, the store's header record
    /// (its identifier, the schema and its version) is durable, and the history's retention
    /// (``WALStoreConfiguration/History``) is applied. When the stored schema differs from the
    /// configured one, the store is migrated first: through `migrationPlan`'s stages when one is
    /// given, else by a lightweight migration (``SchemaChange`` lists what it can do). A
    /// migration is all or nothing: when it throws, or the power goes before it returns, the
    /// store is as it was under its old schema; once the header names the new schema, all of it
    /// is there. The generation of records a migration replaced is deleted after this returns,
    /// in the background, while the store serves calls; ``close()`` stops that, and the next
    /// open goes on with it.
    ///
    /// A new store is made only in an empty or missing directory, or where
    /// ``WALStoreConfiguration/missingHeader`` says so: a directory without a header that holds
    /// keys, or the `quarantine/` folder of a salvage, is refused, so a store that lost its
    /// header never reopens as a new, empty one.
    ///
    /// A refused open (a schema no migration can reach, a store version the plan does not
    /// list, data a migration step cannot bring into the new schema, a damaged header or
    /// history state, a missing header) writes nothing: the store's files are byte-identical
    /// afterwards (but for what the engine's recovery repairs, as on any open, before a key can be
    /// read: a torn tail a crash left cut off, a format-3 store upgraded); what an
    /// open cleans up (the leftovers of an interrupted migration) it removes only once it is
    /// known to succeed.
    ///
    /// A migration runs inside this initializer, while this process holds the store's lock
    /// file, so no other reader or writer of the store exists meanwhile: a second opener, in
    /// this process or another, fails at once with ``DataStoreError/Code/locked`` (it does not
    /// wait; the engine's ``EngineError/Code/locked`` is its cause); it can open the store once
    /// this one is closed. There is no reader that sees the store half migrated.
    ///
    /// Removing an entity that holds objects deletes them, so a lightweight migration without a
    /// plan refuses it (``DataStoreError/Code/schemaMismatch`` naming the entity); a plan's stage
    /// for the step (`.lightweight` will do) allows it.
    ///
    /// - Throws: ``DataStoreError/Code/invalidRequest`` without a schema or with a history
    ///   retention out of range; ``DataStoreError/Code/schemaMismatch`` naming the changes no
    ///   migration can make, or a stored schema that is none of the plan's versions (naming the
    ///   stored version and the plan's); `uniqueness` or `missingValue` naming every object a
    ///   migration cannot bring into the new schema (in ``DataStoreError/identifier`` and
    ///   ``DataStoreError/relatedIdentifiers``, the rule in ``DataStoreError/constraint``);
    ///   ``DataStoreError/Code/migrationFailed`` when a custom stage's closure throws;
    ///   ``DataStoreError/Code/locked`` when another opener has the store open;
    ///   ``DataStoreError/Code/notAStore`` for a directory of other files, or an engine store
    ///   with keys but no header (nothing is written to it);
    ///   ``DataStoreError/Code/headerLost`` for a directory without a header that holds the
    ///   `quarantine/` folder of a salvage (nothing is written to it; both refusals give way to
    ///   ``WALStoreConfiguration/MissingHeader/createStore``);
    ///   ``DataStoreError/Code/permissionDenied`` when the system refuses access;
    ///   ``DataStoreError/Code/corrupted`` for damaged files or a header that does not decode;
    ///   ``DataStoreError/Code/engine`` for any other engine failure. Each keeps the engine's
    ///   error as its cause.
    public convenience init(_ configuration: WALStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)? = nil) throws {
        try self.init(configuration, migrationPlan: migrationPlan, fileSystem: PosixFileSystem())
    }

    /// Opens the store on `fileSystem` (tests inject faults through it). With `sweepsInBackground`
    /// false, the sweep of other generations waits for ``sweepGenerations()`` (tests run it at
    /// the point they choose).
    package init(
        _ configuration: WALStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)? = nil, fileSystem: any FileSystem,
        sweepsInBackground: Bool = true
    ) throws {
        guard let schema = configuration.schema else {
            throw DataStoreError(.invalidRequest, "A WALDataStore needs a schema; pass one in its configuration.")
        }
        try configuration.history.validate()
        // Looked for before the engine opens: the engine's open leaves the folder alone.
        let salvaged = Self.holdsQuarantine(configuration.path, fileSystem: fileSystem)
        let engine = try Self.engineCall("Opening the store") {
            // No background work (hint files, flushes, the collection of unreferenced blob
            // files) starts until the open is known to succeed: a refused open writes nothing.
            try LogStore.open(
                at: configuration.path, options: configuration.options, fileSystem: fileSystem, collectingBlobs: false,
                deferringBackgroundWork: true)
        }
        do {
            try Self.refuseMissingHeader(in: engine, configuration: configuration, salvaged: salvaged)
            // The history's state must decode before the open writes anything: a refused open
            // leaves the files byte-identical.
            _ = try Self.engineCall("Reading the store's history") {
                try engine.value(forKey: RecordKeys.historyMeta).map { bytes throws(RecordDecodingError) in try HistoryState(decoding: bytes) }
            }
        } catch {
            // Nothing was committed: the store is given up without a close frame or hint file.
            engine.closeWithoutWriting()
            throw error
        }
        let header: StoreHeader
        do {
            header = try Self.engineCall("Reading the store's header") {
                try StoreMigrator(engine: engine, configuration: configuration, target: schema, plan: migrationPlan).open()
            }
        } catch {
            try? engine.close()
            throw error
        }
        self.configuration = configuration
        self.schema = schema
        self.layout = RecordLayout(schema: schema)
        self.engine = engine
        self.identifier = header.identifier
        self.space = RecordSpace(engine: engine, generation: header.generation)
        self.isMigrationContext = false
        self.counts = EntityCounts(space: space, schema: schema)
        self.sweep = BackgroundSweep(engine: engine, live: header.generation)
        do {
            self.history = try Self.engineCall("Opening the store's history") {
                try HistoryLog(engine: engine, settings: configuration.history, storeIdentifier: header.identifier)
            }
            // A store written before counts were kept is counted here, once.
            try Self.engineCall("Reading the store's counts") { try counts.load() }
            // The open goes ahead: the generations the header does not name may go.
            if sweepsInBackground { try Self.engineCall("Looking for generations to sweep") { try sweep?.start() } }
        } catch {
            try? engine.close()
            throw error
        }
        engine.startBackgroundWork()
    }

    /// A custom migration stage's store: `schema` over the generation `space` of `engine`. Its
    /// saves record no history (the migration is not a transaction of the store's history).
    init(migrationContext configuration: WALStoreConfiguration, schema: Schema, engine: LogStore, identifier: String, space: RecordSpace) {
        var configuration = configuration
        configuration.schema = schema
        self.configuration = configuration
        self.schema = schema
        self.layout = RecordLayout(schema: schema)
        self.engine = engine
        self.identifier = identifier
        self.space = space
        self.isMigrationContext = true
        self.counts = EntityCounts(space: space, schema: schema)
        self.sweep = nil
        self.history = HistoryLog(recordingNothingOn: engine, storeIdentifier: identifier)
    }

    /// How many records (objects' `R` values) the store has read and decoded since it was
    /// opened: the difference across a fetch is what that fetch read.
    public var recordsRead: Int { recordsReadCounter.load(ordering: .relaxed) }

    func countRecordRead() { recordsReadCounter.add(1, ordering: .relaxed) }

    /// Closes the engine store; later calls throw ``DataStoreError/Code/closed``. Everything
    /// saved is already durable (in the durable sync mode) when its save returned. A sweep of
    /// the generation a migration replaced that is still going stops first; the next open goes
    /// on with it. (The store a custom migration stage is given is not closed: the migration
    /// goes on with its engine.)
    public func close() throws {
        guard !isMigrationContext else { return }
        defer { observers.removeAll() }
        sweep?.stop()
        try gate.withLock { try Self.engineCall("Closing the store") { try engine.close() } }
    }

    // MARK: Async variants: the synchronous work, on the engine's I/O threads.

    /// As ``save(_:)``, run on one of the engine's I/O threads (a save that may share a commit
    /// waits for it without holding any thread); durable as ``save(_:)`` when it returns.
    public func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) async throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        if canShareCommit(request) { return try await saveSharingCommit(request) }
        return try await onIOThread { try self.save(request) }
    }

    /// As ``fetch(_:)``, run on one of the engine's I/O threads.
    public func fetch(_ request: DataStoreFetchRequest) async throws -> DataStoreFetchResult<DefaultSnapshot> {
        try await onIOThread { try self.fetch(request) }
    }

    /// As ``fetchCount(_:)``, run on one of the engine's I/O threads.
    public func fetchCount(_ request: DataStoreFetchRequest) async throws -> Int {
        try await onIOThread { try self.fetchCount(request) }
    }

    /// As ``fetchIdentifiers(_:)``, run on one of the engine's I/O threads.
    public func fetchIdentifiers(_ request: DataStoreFetchRequest) async throws -> [PersistentIdentifier] {
        try await onIOThread { try self.fetchIdentifiers(request) }
    }

    /// As ``erase()``, run on one of the engine's I/O threads; durable as ``erase()``.
    public func erase() async throws {
        try await onIOThread { try self.erase() }
    }

    /// As ``delete(_:)``, run on one of the engine's I/O threads; durable as ``delete(_:)``.
    public func delete(_ request: DataStoreBatchDeleteRequest) async throws {
        try await onIOThread { try self.delete(request) }
    }

    func onIOThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let result = await LogStore.runOnIOThread { () -> Result<T, DataStoreError> in
            do { return .success(try body()) } catch { return .failure(Self.wrapped(error, "The call")) }
        }
        return try result.get()
    }

    /// Whether the directory at `path` holds the `quarantine/` folder salvage makes: a store
    /// was there and lost bytes. False when it cannot be listed (the engine's open says why).
    static func holdsQuarantine(_ path: String, fileSystem: any FileSystem) -> Bool {
        ((try? fileSystem.listDirectory(path)) ?? []).contains(LogStore.quarantineDirectoryName)
    }

    /// Refuses an engine store without a header record that shows a store was there, unless
    /// the configuration asks for a new store (``WALStoreConfiguration/MissingHeader``): one that
    /// holds a `quarantine/` folder (`salvaged`: salvage dropped the header's commit, say) is
    /// ``DataStoreError/Code/headerLost``; one that holds keys is
    /// ``DataStoreError/Code/notAStore`` (written through the engine directly or by another
    /// program: opening would write a header beside them and read them as records). From the
    /// in-memory index: no I/O.
    static func refuseMissingHeader(in engine: LogStore, configuration: WALStoreConfiguration, salvaged: Bool) throws {
        let path = configuration.path
        try engineCall("Opening the store") {
            guard try !engine.contains(RecordKeys.meta), configuration.missingHeader == .refuse else { return }
            var cursor = try engine.scan(limit: 1)
            let first = try cursor.next()?.key
            if salvaged {
                let holds = first == nil ? "no key at all" : "keys (what salvage kept of its records, perhaps) but not the header"
                throw DataStoreError(
                    .headerLost,
                    "The store at \(path) holds a quarantine/ folder, where salvage set damaged bytes aside, and \(holds): the store lost its WALDataStore header, and opening it would start a new, empty store there. Nothing was changed. Run `walstore verify \(path)` and `walstore info \(path)` to see what is left, restore the store from a copy, or start a new store there on purpose with the configuration's missingHeader = .createStore."
                )
            }
            guard let first else { return }
            throw DataStoreError(
                .notAStore,
                "The engine store at \(path) holds keys (the first is \(first.prefix(16).map { String($0, radix: 16) }.joined(separator: " "))) but no WALDataStore header: it was written through the engine directly or by another program. Nothing was changed; open it with LogStore, give the WALDataStore an empty or new directory, or start a store beside those keys on purpose with the configuration's missingHeader = .createStore."
            )
        }
    }

    // MARK: Errors

    /// `body`'s result, with engine and decoding errors wrapped as ``DataStoreError/Code/engine``.
    static func engineCall<T>(_ action: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw wrapped(error, action) }
    }

    static func wrapped(_ error: any Error, _ action: String) -> DataStoreError {
        switch error {
        case let e as DataStoreError:
            return e
        case let e as EngineError:
            return DataStoreError(Self.code(of: e), Self.message(action, e), underlying: e)
        case let e as RecordDecodingError:
            return DataStoreError(
                .corrupted, "\(action) read a stored record that does not decode (\(e.reason)); the store is damaged: salvage or restore it.",
                underlying: e)
        default:
            return DataStoreError(.engine, "\(action) failed.", underlying: error)
        }
    }

    /// The store's code for an engine failure: one a program can switch on for each condition
    /// a user meets (``DataStoreError/Code/engine`` for the rest).
    package static func code(of error: EngineError) -> DataStoreError.Code {
        switch error.code {
        case .locked: return .locked
        case .notAStore: return .notAStore
        case .closed: return .closed
        case .corruption, .missingBlob: return .corrupted
        case .io where [EACCES, EPERM, EROFS].contains(error.errno ?? 0): return .permissionDenied
        default: return .engine
        }
    }

    /// What went wrong and what to do next, for `error` met while doing `action`; the engine's
    /// own text is in the cause (``DataStoreError/underlying``), not repeated here.
    package static func message(_ action: String, _ error: EngineError) -> String {
        switch code(of: error) {
        case .locked:
            return "\(action) failed: another opener, in this process or another, has the store open; close it first, or open another directory."
        case .notAStore:
            return "\(action) failed: the directory holds other files and no store; choose an empty or new directory."
        case .closed:
            return "\(action) failed: the store is closed; open it again."
        case .corrupted:
            return "\(action) failed: the store's files are damaged; salvage the store (LogStore.salvage(at:)) or restore it from a copy."
        case .permissionDenied:
            return "\(action) failed: the operating system refused access to the store's files; fix the permissions or choose another directory."
        default:
            return "\(action) failed in the engine; the engine error's code says what to do."
        }
    }
}
