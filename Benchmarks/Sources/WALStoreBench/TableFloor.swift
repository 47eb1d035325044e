import BenchSupport
import CTableFloor

/// The plain loop beside `readseq-cached` and `readrandom-cached`: a plain C11 reader
/// (`Sources/CTableFloor`, libc and zlib only) of the one table file of the store those rows read
/// (``CachedReadStore``), table version 4 or 5. Untimed, it reads the file, checks its footer,
/// trailers, checksums, metadata (version 5: the top-level index and every partition) and every
/// entry as FORMAT.md states, and inflates every data block (and index partition) once into
/// memory; its decode is then checked against the data set (every key and value, in key order,
/// by crc32). Each timed pass follows one untimed run of the same pass, as WALStore's does:
///
/// - `readseq-cached`: one pass decoding every entry in place (the key rebuilt into one buffer,
///   the value found, its kind byte and sequence varint decoded, its length added up);
/// - `readrandom-cached`: the same N lookups as WALStore's (``DataSet/readOrder``), each, in
///   place, a binary search of the top-level index's separators (version 5) and of that index
///   partition's (version 4: of the index block's), a binary search of the block's restart points
///   and a walk of the interval to the key (no filter probe: every key is present).
///
/// It is a floor for WALStore's table format — what a read of a cached block costs with nothing
/// around the decode: no cache lookup, lock, merge with the log's tail, copy of the value or
/// checks — not a bound a real store reaches. Its entry count must equal WALStore's scan of the
/// same repetition, and every lookup must find its key with a value of the right length, or the
/// run fails.
struct TableFloor: Contender {
    let name: String
    /// The contender whose store the floor reads, and whose sample of the same repetition it checks
    /// its count against.
    let reference: WALStoreContender

    func supports(_ workload: Workload) -> Bool { workload.readsCachedTable }

    func measure(_ workload: Workload, in context: RunContext) throws -> Sample {
        guard let model = context.currentRepetition[reference.name] else {
            throw BenchError("the table floor needs a \(reference.name) sample of the same repetition first")
        }
        let data = context.data
        let stored = try reference.cachedReadStore(in: context)
        let table = try FloorTable(path: stored.tablePath)
        try table.check(against: Self.expectedDigest(context))
        let figures: [String: Double] = [
            Figure.records: Double(stored.records),
            Figure.tableBlocks: Double(ctf_block_count(table.pointer)),
            Figure.zlibBlocks: Double(ctf_zlib_block_count(table.pointer)),
            Figure.inflatedBytes: Double(ctf_inflated_bytes(table.pointer)),
            Figure.tableBytes: Double(ctf_file_bytes(table.pointer)),
        ]
        switch workload {
        case .readseqCached:
            var totals = ctf_scan_totals()
            ctf_scan(table.pointer, &totals)
            let (_, seconds) = Stopwatch.time { ctf_scan(table.pointer, &totals) }
            let entries = Int(totals.entries)
            let bytes = Int(totals.key_bytes + totals.value_bytes)
            guard entries == model.operations, entries == data.count, bytes == data.rawBytes else {
                throw BenchError("the table floor decoded \(entries) entries of \(bytes) bytes from \(stored.tablePath), "
                    + "but \(reference.name)'s scan read \(model.operations) and the data set holds \(data.count) of \(data.rawBytes) bytes")
            }
            return Sample(seconds: seconds, operations: entries, rawBytes: bytes, bytesOnDisk: stored.bytesOnDisk, figures: figures)
        case .readrandomCached:
            let keys = Self.lookupKeys(context)
            var valueBytes: UInt64 = 0
            let (found, seconds) = keys.bytes.withUnsafeBufferPointer { bytes -> (UInt64, Double) in
                keys.offsets.withUnsafeBufferPointer { offsets -> (UInt64, Double) in
                    _ = ctf_lookup_all(table.pointer, bytes.baseAddress, offsets.baseAddress, data.readOrder.count, &valueBytes)
                    return Stopwatch.time {
                        ctf_lookup_all(table.pointer, bytes.baseAddress, offsets.baseAddress, data.readOrder.count, &valueBytes)
                    }
                }
            }
            let bytes = keys.bytes.count + Int(valueBytes)
            guard Int(found) == data.readOrder.count, Int(found) == model.operations, bytes == keys.expectedBytes else {
                throw BenchError("the table floor found \(found) of \(data.readOrder.count) keys in \(stored.tablePath) "
                    + "(\(bytes) key + value bytes, expected \(keys.expectedBytes)); \(reference.name) read \(model.operations)")
            }
            return Sample(
                seconds: seconds, operations: Int(found), rawBytes: bytes, bytesOnDisk: stored.bytesOnDisk, figures: figures)
        default:
            throw BenchError("the table floor does not run \(workload.rawValue)")
        }
    }

    /// The crc32 (zlib's, chained) of every record in key order, each as its key's length (u32,
    /// little-endian), the key, its value's length and the value: what the table must decode to.
    static func expectedDigest(_ context: RunContext) -> (entries: Int, crc: UInt32) {
        context.shared("table floor digest") { () -> (entries: Int, crc: UInt32) in
            let sorted = context.data.records.sorted { $0.key.lexicographicallyPrecedes($1.key) }
            var crc: UInt32 = 0
            for record in sorted {
                crc = record.key.withUnsafeBytes { key in
                    record.value.withUnsafeBytes { value in FloorTable.digest(crc, key: key, value: value) }
                }
            }
            return (sorted.count, crc)
        }
    }

    /// The keys of ``DataSet/readOrder`` back to back, their offsets (one more than the keys), and
    /// the key + value bytes the lookups must find.
    static func lookupKeys(_ context: RunContext) -> (bytes: [UInt8], offsets: [UInt64], expectedBytes: Int) {
        context.shared("table floor keys") { () -> (bytes: [UInt8], offsets: [UInt64], expectedBytes: Int) in
            var bytes: [UInt8] = []
            var offsets: [UInt64] = [0]
            var expected = 0
            for index in context.data.readOrder {
                let record = context.data.records[index]
                bytes += record.key
                offsets.append(UInt64(bytes.count))
                expected += record.rawBytes
            }
            return (bytes, offsets, expected)
        }
    }
}

/// An open `ctf_table`: the table file checked and its data blocks inflated in memory.
final class FloorTable {
    let pointer: OpaquePointer

    init(path: String) throws {
        var error = [CChar](repeating: 0, count: 512)
        guard let pointer = ctf_open(path, &error, error.count) else {
            throw BenchError("the table floor cannot read \(path): \(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))")
        }
        self.pointer = pointer
    }

    deinit {
        ctf_close(pointer)
    }

    /// Walks every entry with the C cursor and checks the count and digest
    /// (``TableFloor/expectedDigest(_:)``): every entry a value (kind 1), the same keys and values
    /// in the same order.
    func check(against expected: (entries: Int, crc: UInt32)) throws {
        guard let cursor = ctf_cursor_open(pointer) else { throw BenchError("the table floor: out of memory") }
        defer { ctf_cursor_close(cursor) }
        var entry = ctf_entry()
        var entries = 0
        var crc: UInt32 = 0
        while ctf_cursor_next(cursor, &entry) == 1 {
            guard entry.kind == 1 else { throw BenchError("the table floor met an entry of kind \(entry.kind); the store holds values only") }
            crc = Self.digest(crc, key: UnsafeRawBufferPointer(start: entry.key, count: Int(entry.key_length)),
                              value: UnsafeRawBufferPointer(start: entry.value, count: Int(entry.value_length)))
            entries += 1
        }
        guard entries == expected.entries, crc == expected.crc else {
            throw BenchError("the table floor decoded \(entries) entries (crc32 \(crc)), but the data set has \(expected.entries) "
                + "(crc32 \(expected.crc)): the C decoder does not read the table WALStore wrote")
        }
    }

    /// `crc` continued over the key's length (u32, little-endian), the key, the value's length
    /// and the value.
    static func digest(_ crc: UInt32, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> UInt32 {
        var crc = crc
        for part in [key, value] {
            var length = UInt32(part.count).littleEndian
            crc = withUnsafeBytes(of: &length) { ctf_crc32(crc, $0.baseAddress, 4) }
            crc = ctf_crc32(crc, part.baseAddress, part.count)
        }
        return crc
    }
}
