#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import Engine

/// An in-memory file system for crash and fault tests.
///
/// It keeps, for every file, the bytes a process would see (the page cache) and the bytes that
/// would survive power loss (what the last `sync` made durable); and for the directory, the names
/// a process sees and the names made durable by the last `syncDirectory`. On top of that it can:
/// - ``powerLoss()``: drop every unsynced byte and every unsynced name (the machine lost power);
/// - ``powerLoss(keepingUnsyncedPages:pageSize:)``: the same, except that the unsynced pages the
///   test chooses reached the disk (write-back in any order: a later page kept, an earlier lost);
/// - ``processCrash()``: keep everything written (the process died; the kernel did not);
/// - stop the world at any mutating operation (``crash(atOperation:tornWriteBytes:)``), optionally
///   letting only the first bytes of that write land;
/// - fail any chosen operation with an `errno` (``fail(_:errno:partialBytes:)``) and go on — a
///   failed sync behaves as on Linux: the unsynced bytes stay readable but no later sync saves them;
/// - flip bits (``flipBit(in:atByte:bit:)``).
///
/// Every file handle belongs to a *generation*; after a crash the old handles (the dead process's)
/// fail, and the store is reopened with new ones.
package final class FaultInjectingFileSystem: FileSystem {
    /// The kinds of mutating operation, counted from 1 in ``operationLog``.
    package enum OperationKind: String, Sendable, CaseIterable {
        case create, write, sync, truncate, rename, remove, syncDirectory
    }

    package struct Operation: Sendable, CustomStringConvertible {
        package var kind: OperationKind
        package var path: String
        package var description: String { "\(kind) \(path)" }
    }

    struct Node {
        var current: [UInt8] = []
        var durable: [UInt8] = []
        /// Byte ranges whose sync failed. Like Linux after a failed fsync, their pages stay
        /// readable but are marked clean: no later sync writes them, and power loss takes them.
        var lost: [Range<Int>] = []

        mutating func markUnsyncedLost() {
            let common = min(durable.count, current.count)
            let start = (0..<common).first { durable[$0] != current[$0] } ?? common
            if start < current.count { lost.append(start..<current.count) }
        }

        mutating func syncNow() {
            guard !lost.isEmpty else {
                durable = current
                return
            }
            var next = current
            for range in lost {
                for i in range where i < next.count { next[i] = i < durable.count ? durable[i] : 0 }
            }
            durable = next
            lost = []
        }
    }

    struct Rule {
        enum Effect { case crash, fail(Int32) }
        /// nil: `number` counts every mutating operation; else only operations of this kind.
        var kind: OperationKind?
        var number: Int
        var effect: Effect
        var partialBytes: Int?
    }

    struct State {
        var nodes: [Int: Node] = [:]
        var nextNode = 1
        var names: [String: Int] = [:]
        var durableNames: [String: Int] = [:]
        var directories: Set<String> = []
        var locks: Set<String> = []
        var generation = 0
        var crashed = false
        var operations: [Operation] = []
        var rules: [Rule] = []
        var kindFaults: [OperationKind: Int32] = [:]
        var kindCounts: [OperationKind: Int] = [:]
        var largestRead = 0
        var readCount = 0
        var bytesRead = 0
        /// Reads of files whose path ends with this fail with this errno (``failReads(ofPathsEndingWith:errno:)``).
        var readFault: (suffix: String, errno: Int32)?
        /// The disk's size in bytes (``setCapacity(_:)``); nil for no limit.
        var capacity: Int?

        /// Bytes held by the files that have a name.
        var usedBytes: Int { Set(names.values).reduce(0) { $0 + (nodes[$1]?.current.count ?? 0) } }
    }

    let state = Locked(State())
    /// Called before every sync, outside the file system's lock, with the sync's number.
    let syncHook = Locked<(@Sendable (Int) -> Void)?>(nil)
    /// Called at the start of every call into the file system or one of its files.
    let accessHook = Locked<(@Sendable (Access) -> Void)?>(nil)

    /// Every kind of call into the file system or one of its files, reads and queries included.
    package enum AccessKind: String, Sendable, CaseIterable {
        case createDirectory, listDirectory, open, remove, rename, syncDirectory, lock
        case read, write, sync, size, truncate, linkCount, map
    }

    /// One call into the file system, as ``onEveryAccess(_:)`` reports it.
    package struct Access: Sendable, CustomStringConvertible {
        package var kind: AccessKind
        package var path: String
        package var description: String { "\(kind) \(path)" }
    }

    package init() {}

    // MARK: Test controls

    /// The mutating operations performed so far, in order; operation `n` is `operationLog[n - 1]`.
    package var operationLog: [Operation] { state.withLock { $0.operations } }
    /// How many operations of `kind` have been performed.
    package func count(of kind: OperationKind) -> Int {
        state.withLock { $0.kindCounts[kind, default: 0] }
    }
    /// How many mutating operations have been performed.
    package var operationCount: Int { state.withLock { $0.operations.count } }
    /// The largest byte count any read has asked for: how much the engine was ready to allocate.
    package var largestRead: Int { state.withLock { $0.largestRead } }
    /// How many reads have been made.
    package var readCount: Int { state.withLock { $0.readCount } }
    /// From now on, every read of a file whose path ends with `suffix` fails with `errno` (a
    /// failing disk sector, say); nil lifts it.
    package func failReads(ofPathsEndingWith suffix: String?, errno: Int32 = 5) {
        state.withLock { $0.readFault = suffix.map { ($0, errno) } }
    }

    /// How many bytes the reads made so far returned.
    package var bytesRead: Int { state.withLock { $0.bytesRead } }

    /// At the `number`-th mutating operation from now on (counting from 1 after the operations
    /// already logged), stop: the operation does not happen — except that, for a write,
    /// `tornWriteBytes` of it land first — and every later operation fails.
    package func crash(atOperation number: Int, tornWriteBytes: Int? = nil) {
        state.withLock { $0.rules.append(Rule(number: $0.operations.count + number, effect: .crash, partialBytes: tornWriteBytes)) }
    }

    /// Like ``crash(atOperation:tornWriteBytes:)``, counting only operations of `kind`: stop at
    /// the `number`-th one from now (say, the third sync), whichever thread makes it.
    package func crash(atOccurrence number: Int, of kind: OperationKind) {
        state.withLock { $0.rules.append(Rule(kind: kind, number: $0.kindCounts[kind, default: 0] + number, effect: .crash)) }
    }

    /// Makes the `number`-th mutating operation from now on fail with `errno` (a write may land
    /// `partialBytes` first). Later operations work.
    package func fail(_ number: Int, errno: Int32, partialBytes: Int? = nil) {
        state.withLock { $0.rules.append(Rule(number: $0.operations.count + number, effect: .fail(errno), partialBytes: partialBytes)) }
    }

    /// Makes the next operation of `kind` fail with `errno` (a write lands nothing). Later
    /// operations work.
    package func failNext(_ kind: OperationKind, errno: Int32) {
        state.withLock { $0.kindFaults[kind] = errno }
    }

    /// Calls `hook` before every sync (with the sync's number, counting from 1 over this file
    /// system's life), outside the file system's lock: a test's way to hold a sync while other
    /// threads pile up behind it.
    package func beforeEverySync(_ hook: @escaping @Sendable (Int) -> Void) {
        syncHook.withLock { $0 = hook }
    }

    /// Calls `hook` at the start of every call into the file system or one of its files, on the
    /// calling thread and outside the file system's lock: a test's way to see which thread does
    /// each piece of I/O.
    package func onEveryAccess(_ hook: @escaping @Sendable (Access) -> Void) {
        accessHook.withLock { $0 = hook }
    }

    /// Reports a call to the ``onEveryAccess(_:)`` hook, if there is one.
    func observe(_ kind: AccessKind, _ path: String) {
        if let hook = accessHook.withLock({ $0 }) { hook(Access(kind: kind, path: path)) }
    }

    /// Makes the disk `bytes` large (nil: unlimited): a write that would grow the files past it
    /// lands what fits and fails with `ENOSPC`, as a full disk does; overwriting allocated bytes
    /// and shrinking files still work.
    package func setCapacity(_ bytes: Int?) {
        state.withLock { $0.capacity = bytes }
    }

    /// Bytes the named files hold now.
    package var usedBytes: Int { state.withLock { $0.usedBytes } }

    /// The machine lost power: every file reverts to its last synced bytes, the directory to its
    /// last synced names, locks are released and old handles die.
    package func powerLoss() {
        state.withLock { s in
            for id in s.nodes.keys {
                s.nodes[id]!.current = s.nodes[id]!.durable
                s.nodes[id]!.lost = []
            }
            s.names = s.durableNames
            s.restart()
        }
    }

    /// The machine lost power while the disk was writing dirty pages back in an order of its own
    /// (the weak sync modes' exposure): of every file's unsynced pages, some reached the disk and
    /// some did not, whatever order they were written in.
    ///
    /// Each file is cut into pages of `pageSize` bytes. A page whose current bytes differ from its
    /// durable ones (or that lies, in part, past the durable length) is *kept* — its current bytes
    /// survive — when `keep(path, pageIndex)` returns true, and otherwise *reverted* to its durable
    /// bytes (zeros past the durable length). Bytes of a failed sync (see
    /// ``fail(_:errno:partialBytes:)``) are always reverted: no later sync wrote them. The file's
    /// length is its durable length, extended to the end of the last kept page (clipped to the
    /// current length); an unsynced shrink is undone. `path` is the name the file has after the
    /// power loss. As with ``powerLoss()``, the directory reverts to its last synced names, locks
    /// are released and old handles die.
    package func powerLoss(keepingUnsyncedPages keep: (_ path: String, _ page: Int) -> Bool, pageSize: Int = 4096) {
        precondition(pageSize > 0, "a page holds at least one byte")
        state.withLock { s in
            var pathOf: [Int: String] = [:]
            for (name, id) in s.names { pathOf[id] = name }
            for (name, id) in s.durableNames { pathOf[id] = name }
            for id in s.nodes.keys {
                let node = s.nodes[id]!
                var lost = [Bool](repeating: false, count: node.current.count)
                for range in node.lost {
                    for i in range where i < lost.count { lost[i] = true }
                }
                let span = max(node.current.count, node.durable.count)
                var result = node.durable
                var end = node.durable.count
                for page in 0..<(span + pageSize - 1) / pageSize {
                    let bytes = page * pageSize..<min((page + 1) * pageSize, span)
                    let differs = bytes.contains { i in
                        i >= node.current.count || i >= node.durable.count || node.current[i] != node.durable[i]
                    }
                    guard differs, let path = pathOf[id], keep(path, page) else { continue }
                    let kept = bytes.clamped(to: 0..<node.current.count)
                    guard !kept.isEmpty else { continue }
                    if result.count < kept.upperBound {
                        result += [UInt8](repeating: 0, count: kept.upperBound - result.count)
                    }
                    for i in kept where !lost[i] { result[i] = node.current[i] }
                    end = max(end, kept.upperBound)
                }
                s.nodes[id]!.current = Array(result.prefix(end))
                s.nodes[id]!.durable = s.nodes[id]!.current
                s.nodes[id]!.lost = []
            }
            s.names = s.durableNames
            s.restart()
        }
    }

    /// The process died but the kernel did not: everything written stays; locks are released and
    /// old handles die.
    package func processCrash() {
        state.withLock { $0.restart() }
    }

    /// An independent copy of this file system as it is now (files, names, durability), with no
    /// locks held and no fault rules: a snapshot to branch many crash scenarios from.
    package func clone() -> FaultInjectingFileSystem {
        let copy = FaultInjectingFileSystem()
        let snapshot = state.withLock { $0 }
        copy.state.withLock { s in
            s = snapshot
            s.restart()
        }
        return copy
    }

    /// The bytes a process would read from `path` now.
    package func contents(of path: String) -> [UInt8]? {
        state.withLock { s in s.names[path].flatMap { s.nodes[$0]?.current } }
    }

    /// Replaces the contents of `path`, durably (a test's hand-made damage).
    package func setContents(_ bytes: [UInt8], of path: String) {
        state.withLock { s in
            guard let id = s.names[path] else { return }
            s.nodes[id]!.current = bytes
            s.nodes[id]!.durable = bytes
        }
    }

    /// Flips one bit of `path`, durably.
    package func flipBit(in path: String, atByte offset: Int, bit: Int = 0) {
        guard var bytes = contents(of: path) else { return }
        bytes[offset] ^= UInt8(1 << bit)
        setContents(bytes, of: path)
    }

    /// The names in the directory now (for assertions).
    package func names(in directory: String) -> [String] {
        (try? listDirectory(directory)) ?? []
    }

    // MARK: FileSystem

    package func createDirectory(_ path: String) throws(EngineError) -> Bool {
        observe(.createDirectory, path)
        return try state.withLock { s throws(EngineError) in
            try s.checkAlive(path)
            return s.directories.insert(path).inserted
        }
    }

    package func listDirectory(_ path: String) throws(EngineError) -> [String] {
        observe(.listDirectory, path)
        return try state.withLock { s throws(EngineError) in
            try s.checkAlive(path)
            let prefix = path + "/"
            return s.names.keys.filter { $0.hasPrefix(prefix) && !$0.dropFirst(prefix.count).contains("/") }
                .map { String($0.dropFirst(prefix.count)) }
        }
    }

    package func openFile(_ path: String, create: Bool) throws(EngineError) -> any StoreFile {
        observe(.open, path)
        return try state.withLock { s throws(EngineError) -> any StoreFile in
            try s.checkAlive(path)
            if s.names[path] == nil {
                guard create else {
                    throw EngineError(.io, "open failed: no such file", path: path, systemCall: "open", errno: 2)
                }
                try s.performOrThrow(.create, path)
                s.names[path] = s.nextNode
                s.nodes[s.nextNode] = Node()
                s.nextNode += 1
            }
            return FaultFile(fileSystem: self, node: s.names[path]!, path: path, generation: s.generation)
        }
    }

    package func openFileForReading(_ path: String) throws(EngineError) -> any StoreFile {
        try openFile(path, create: false)
    }

    package func removeFile(_ path: String) throws(EngineError) {
        observe(.remove, path)
        try state.withLock { s throws(EngineError) in
            try s.checkAlive(path)
            guard s.names[path] != nil else {
                throw EngineError(.io, "unlink failed: no such file", path: path, systemCall: "unlink", errno: 2)
            }
            try s.performOrThrow(.remove, path)
            s.names[path] = nil
        }
    }

    /// A second name for the file at `existing`, like `link(2)` (a test's hard-linked backup);
    /// not an operation of the store's, so it is not logged or faulted.
    package func linkFile(_ existing: String, to newPath: String) {
        state.withLock { s in s.names[newPath] = s.names[existing] }
    }

    package func rename(_ from: String, to: String) throws(EngineError) {
        observe(.rename, from)
        try state.withLock { s throws(EngineError) in
            try s.checkAlive(from)
            guard let id = s.names[from] else {
                throw EngineError(.io, "rename failed: no such file", path: from, systemCall: "rename", errno: 2)
            }
            try s.performOrThrow(.rename, from)
            s.names[from] = nil
            s.names[to] = id
        }
    }

    package func syncDirectory(_ path: String) throws(EngineError) {
        observe(.syncDirectory, path)
        try state.withLock { s throws(EngineError) in
            try s.checkAlive(path)
            try s.performOrThrow(.syncDirectory, path)
            let prefix = path + "/"
            func inDirectory(_ name: String) -> Bool {
                name.hasPrefix(prefix) && !name.dropFirst(prefix.count).contains("/")
            }
            s.durableNames = s.durableNames.filter { !inDirectory($0.key) }
            for (name, id) in s.names where inDirectory(name) { s.durableNames[name] = id }
        }
    }

    package func lockFile(_ path: String) throws(EngineError) -> any FileLock {
        observe(.lock, path)
        return try state.withLock { s throws(EngineError) -> any FileLock in
            try s.checkAlive(path)
            guard !s.locks.contains(path) else {
                throw EngineError(.locked, "the store is open elsewhere", path: path, systemCall: "flock", errno: 11)
            }
            s.locks.insert(path)
            return FaultLock(fileSystem: self, path: path, generation: s.generation)
        }
    }
}

extension FaultInjectingFileSystem.State {
    /// Fails every call made through a handle of a dead generation, or after a crash.
    func checkAlive(_ path: String, generation: Int? = nil) throws(EngineError) {
        if crashed || (generation.map { $0 != self.generation } ?? false) {
            throw EngineError(.io, "the simulated machine has crashed", path: path, systemCall: "crashed", errno: 5)
        }
    }

    /// Logs a mutating operation and applies the fault rules to it. Returns nil to go ahead, or
    /// the error to throw after landing `partialBytes` of a write.
    mutating func perform(
        _ kind: FaultInjectingFileSystem.OperationKind, _ path: String
    ) -> (error: EngineError, partialBytes: Int?)? {
        operations.append(.init(kind: kind, path: path))
        kindCounts[kind, default: 0] += 1
        let call =
            switch kind {
            case .create: "open"
            case .write: "pwrite"
            case .sync: "fdatasync"
            case .truncate: "ftruncate"
            case .rename: "rename"
            case .remove: "unlink"
            case .syncDirectory: "fsync"
            }
        if let code = kindFaults.removeValue(forKey: kind) {
            return (EngineError(.io, "\(call) failed (injected errno \(code))", path: path, systemCall: call, errno: code), nil)
        }
        let kindCount = kindCounts[kind, default: 0]
        guard
            let index = rules.firstIndex(where: { rule in
                rule.kind.map { $0 == kind && rule.number == kindCount } ?? (rule.number == operations.count)
            })
        else { return nil }
        let rule = rules.remove(at: index)
        switch rule.effect {
        case .crash:
            crashed = true
            return (EngineError(.io, "simulated crash at \(call)", path: path, systemCall: call, errno: 5), rule.partialBytes)
        case .fail(let code):
            return (EngineError(.io, "\(call) failed (injected errno \(code))", path: path, systemCall: call, errno: code), rule.partialBytes)
        }
    }

    /// Throws `fault`'s error if there is one (for operations that cannot land partially).
    mutating func performOrThrow(_ kind: FaultInjectingFileSystem.OperationKind, _ path: String) throws(EngineError) {
        if let fault = perform(kind, path) { throw fault.error }
    }

    mutating func restart() {
        locks = []
        generation += 1
        crashed = false
        rules = []
        kindFaults = [:]
    }
}

/// A handle on a node of the fault-injecting file system.
final class FaultFile: StoreFile {
    let fileSystem: FaultInjectingFileSystem
    let node: Int
    let path: String
    let generation: Int

    init(fileSystem: FaultInjectingFileSystem, node: Int, path: String, generation: Int) {
        self.fileSystem = fileSystem
        self.node = node
        self.path = path
        self.generation = generation
    }

    func read(at offset: UInt64, count: Int) throws(EngineError) -> [UInt8] {
        fileSystem.observe(.read, path)
        return try fileSystem.state.withLock { s throws(EngineError) in
            try s.checkAlive(path, generation: generation)
            if let fault = s.readFault, path.hasSuffix(fault.suffix) {
                throw EngineError(.io, "simulated read failure", path: path, offset: offset, systemCall: "pread", errno: fault.errno)
            }
            s.largestRead = max(s.largestRead, count)
            s.readCount += 1
            let bytes = s.nodes[node]!.current
            let start = Int(min(offset, UInt64(bytes.count)))
            s.bytesRead += min(start + count, bytes.count) - start
            return Array(bytes[start..<min(start + count, bytes.count)])
        }
    }

    func write(_ bytes: [UInt8], at offset: UInt64) throws(EngineError) {
        fileSystem.observe(.write, path)
        try fileSystem.state.withLock { s throws(EngineError) in
            try s.checkAlive(path, generation: generation)
            var fault = s.perform(.write, path)
            var landing = fault.map { bytes.prefix($0.partialBytes ?? 0) } ?? bytes[...]
            let start = Int(offset)
            let count = s.nodes[node]!.current.count
            if let capacity = s.capacity, start + landing.count > count {
                let room = max(0, capacity - s.usedBytes)
                let fits = max(0, min(landing.count, count + room - start))
                if fits < landing.count {
                    landing = landing.prefix(fits)
                    fault =
                        fault ?? (EngineError(.io, "pwrite failed: No space left on device", path: path, systemCall: "pwrite", errno: ENOSPC), nil)
                }
            }
            let end = start + landing.count
            if count < end {
                s.nodes[node]!.current += [UInt8](repeating: 0, count: end - count)
            }
            s.nodes[node]!.current.replaceSubrange(start..<end, with: landing)
            if let fault { throw fault.error }
        }
    }

    func sync() throws(EngineError) {
        fileSystem.observe(.sync, path)
        if let hook = fileSystem.syncHook.withLock({ $0 }) {
            hook(fileSystem.state.withLock { $0.kindCounts[.sync, default: 0] } + 1)
        }
        try fileSystem.state.withLock { s throws(EngineError) in
            try s.checkAlive(path, generation: generation)
            if let fault = s.perform(.sync, path) {
                s.nodes[node]!.markUnsyncedLost()
                throw fault.error
            }
            s.nodes[node]!.syncNow()
        }
    }

    func size() throws(EngineError) -> UInt64 {
        fileSystem.observe(.size, path)
        return try fileSystem.state.withLock { s throws(EngineError) in
            try s.checkAlive(path, generation: generation)
            return UInt64(s.nodes[node]!.current.count)
        }
    }

    /// The number of names that map to this file's node (this file system has no hard links
    /// of its own, but ``linkFile(_:to:)`` makes one for tests).
    func linkCount() throws(EngineError) -> UInt64 {
        fileSystem.observe(.linkCount, path)
        return try fileSystem.state.withLock { s throws(EngineError) in
            try s.checkAlive(path, generation: generation)
            return UInt64(s.names.values.filter { $0 == node }.count)
        }
    }

    func truncate(to size: UInt64) throws(EngineError) {
        fileSystem.observe(.truncate, path)
        try fileSystem.state.withLock { s throws(EngineError) in
            try s.checkAlive(path, generation: generation)
            try s.performOrThrow(.truncate, path)
            let count = Int(size)
            let current = s.nodes[node]!.current.count
            if current > count {
                s.nodes[node]!.current.removeSubrange(count...)
            } else {
                s.nodes[node]!.current.append(contentsOf: repeatElement(0, count: count - current))
            }
        }
    }
}

extension FaultFile {
    func map() throws(EngineError) -> MappedFile {
        fileSystem.observe(.map, path)
        let bytes = try read(at: 0, count: Int(try size()))
        // A private copy stands in for the kernel's mapping.
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        bytes.withUnsafeBytes { copy.copyMemory(from: $0) }
        // `start` is kept even for zero bytes, so the release always finds the allocation.
        return MappedFile(bytes: UnsafeRawBufferPointer(start: copy.baseAddress, count: bytes.count)) { region in
            UnsafeMutableRawPointer(mutating: region.baseAddress!).deallocate()
        }
    }
}

/// A lock held in the fault-injecting file system; a crash releases it.
final class FaultLock: FileLock {
    let fileSystem: FaultInjectingFileSystem
    let path: String
    let generation: Int

    init(fileSystem: FaultInjectingFileSystem, path: String, generation: Int) {
        self.fileSystem = fileSystem
        self.path = path
        self.generation = generation
    }

    func unlock() {
        fileSystem.state.withLock { s in
            if s.generation == generation { s.locks.remove(path) }
        }
    }
}
