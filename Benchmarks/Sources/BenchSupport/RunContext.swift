/// What a contender's ``Contender/measure(_:in:)`` gets besides the workload: the data, the
/// scratch directory, the stores already filled for read workloads, and what the contenders
/// measured before it in the same repetition.
public final class RunContext {
    /// The records and orders of the run.
    public let data: DataSet
    /// Where stores are created.
    public let scratch: ScratchDirectory
    /// The sizes of `assets`, `compact` and `open-hints`.
    public let sizes: WorkloadSizes
    /// The samples of the contenders already measured in the current repetition of the current
    /// workload, by contender name (the physical limit reads WALStore's here).
    public internal(set) var currentRepetition: [String: Sample] = [:]
    /// Filled stores, by contender name; built once, read by every read workload and repetition
    /// and copied for `overwrite` and `delete`.
    private var fixtures: [String: (path: String, bytesOnDisk: UInt64)] = [:]
    /// What ``shared(_:build:)`` built, by name.
    private var sharedValues: [String: Any] = [:]
    /// Told about slow set-up steps (building a fixture).
    let progress: (String) -> Void

    init(data: DataSet, scratch: ScratchDirectory, sizes: WorkloadSizes, progress: @escaping (String) -> Void) {
        self.data = data
        self.scratch = scratch
        self.sizes = sizes
        self.progress = progress
    }

    /// The value built under `name` by the first call, kept for the whole run: set-up that every
    /// repetition shares, such as the stores `open-hints` opens. `build` runs only once.
    public func shared<Value>(_ name: String, build: () throws -> Value) rethrows -> Value {
        if let value = sharedValues[name] as? Value { return value }
        let value = try build()
        sharedValues[name] = value
        return value
    }

    /// The directory of a closed store of `contender` holding every record, written 1,000 per
    /// commit; built on first use. Workloads must not write to it (they copy it).
    public func fixture(for contender: some StoreContender) throws -> String {
        try fixtureInfo(for: contender).path
    }

    /// The size at rest of the store of ``fixture(for:)``.
    public func fixtureSize(for contender: some StoreContender) throws -> UInt64 {
        try fixtureInfo(for: contender).bytesOnDisk
    }

    private func fixtureInfo(for contender: some StoreContender) throws -> (path: String, bytesOnDisk: UInt64) {
        if let fixture = fixtures[contender.name] { return fixture }
        progress("  building the \(contender.name) store of \(data.count) records (untimed)")
        let path = scratch.newStorePath("fixture-" + contender.name)
        let store = try contender.open(path)
        try store.load(data.records, batchSize: Workload.bulkBatchSize)
        try store.settle()
        try store.close()
        let fixture = (path, StoreFiles.bytesOnDisk(path))
        fixtures[contender.name] = fixture
        return fixture
    }
}

extension BenchStore {
    /// Writes `records` in commits of `batchSize`.
    public func load(_ records: [Record], batchSize: Int) throws {
        var start = 0
        while start < records.count {
            let end = min(start + batchSize, records.count)
            try put(records[start..<end])
            start = end
        }
    }

    /// Deletes the keys of `records` in commits of `batchSize`.
    public func deleteAll(_ records: [Record], batchSize: Int) throws {
        var start = 0
        while start < records.count {
            let end = min(start + batchSize, records.count)
            try delete(records[start..<end])
            start = end
        }
    }
}
