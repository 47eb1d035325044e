/// The reader of one table block's raw contents (``BlockBuilder``): checks the restart array
/// once, then decodes entries one restart interval at a time. Every length is checked against
/// the bytes before use: a damaged block is ``EngineError/Code/corruption`` naming the table and
/// the block's offset, never a trap.
struct Block: Sendable {
    struct Entry: Sendable, Equatable {
        var key: [UInt8]
        /// Where the entry's value lies in ``Block/raw``.
        var value: Range<Int>
    }

    let raw: [UInt8]
    /// The offset of each restart point, ascending, the first 0.
    private let restarts: [Int]
    /// Where the entries end and the restart array begins.
    private let entriesEnd: Int
    /// For errors: the table and the block's offset in it.
    let path: String
    let offset: UInt64

    init(raw: [UInt8], path: String, offset: UInt64) throws(EngineError) {
        self.raw = raw
        self.path = path
        self.offset = offset
        guard raw.count >= 4 else { throw .corruption("table block of \(raw.count) bytes has no restart count", path: path, offset: offset) }
        let count = Int(loadUInt32(raw[...], at: raw.count - 4))
        guard count <= (raw.count - 4) / 4 else {
            throw .corruption("table block declares \(count) restart points, more than its \(raw.count) bytes hold", path: path, offset: offset)
        }
        entriesEnd = raw.count - 4 - 4 * count
        guard (count == 0) == (entriesEnd == 0) else {
            throw .corruption("table block's restart count \(count) does not match its \(entriesEnd) bytes of entries", path: path, offset: offset)
        }
        var restarts: [Int] = []
        restarts.reserveCapacity(count)
        for i in 0..<count {
            let restart = Int(loadUInt32(raw[...], at: entriesEnd + 4 * i))
            guard entriesEnd > restart, (restarts.last ?? -1) < restart, i > 0 || restart == 0 else {
                throw .corruption("table block's restart point \(i) (\(restart)) is out of order or past its entries", path: path, offset: offset)
            }
            restarts.append(restart)
        }
        self.restarts = restarts
    }

    /// How many restart intervals the block has (0 for an empty block).
    var intervalCount: Int { restarts.count }

    func value(_ entry: Entry) -> ArraySlice<UInt8> { raw[entry.value] }

    /// The entries of restart interval `index`, in order.
    func interval(_ index: Int) throws(EngineError) -> [Entry] {
        var position = restarts[index]
        let end = index + 1 < restarts.count ? restarts[index + 1] : entriesEnd
        var entries: [Entry] = []
        var key: [UInt8] = []
        while position < end {
            let entry = try decodeEntry(at: &position, end: end, previous: key, first: entries.isEmpty)
            key = entry.key
            entries.append(entry)
        }
        return entries
    }

    /// The key of restart interval `index`'s first entry.
    func restartKey(_ index: Int) throws(EngineError) -> [UInt8] {
        var position = restarts[index]
        let end = index + 1 < restarts.count ? restarts[index + 1] : entriesEnd
        return try decodeEntry(at: &position, end: end, previous: [], first: true).key
    }

    /// The last interval whose first key is at or below `target` (0 when every one is above it),
    /// by binary search over the restart points; nil for an empty block.
    func interval(atOrBefore target: [UInt8]) throws(EngineError) -> Int? {
        guard !restarts.isEmpty else { return nil }
        var low = 0
        var high = restarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if compareBytes(try restartKey(middle), target) <= 0 { low = middle } else { high = middle - 1 }
        }
        return low
    }

    private func decodeEntry(at position: inout Int, end: Int, previous: [UInt8], first: Bool) throws(EngineError) -> Entry {
        let start = position
        var reader = ByteReader(raw[position..<end])
        guard let shared = reader.readVarint(limit: LogFormat.maxKeyLength),
            let unshared = reader.readVarint(limit: LogFormat.maxKeyLength),
            let valueLength = reader.readVarint(limit: LogFormat.maxBlockRawLength)
        else { throw corrupt("entry header is cut short or out of range", at: start) }
        guard !first || shared == 0 else { throw corrupt("entry at a restart point shares \(shared) bytes", at: start) }
        guard shared <= previous.count, shared + unshared >= 1, shared + unshared <= LogFormat.maxKeyLength else {
            throw corrupt("entry declares a key of \(shared) + \(unshared) bytes", at: start)
        }
        guard let rest = reader.readBytes(unshared), reader.remaining >= valueLength else {
            throw corrupt("entry runs past the end of its restart interval", at: start)
        }
        var key = Array(previous[..<shared])
        key.append(contentsOf: rest)
        guard first || compareBytes(previous, key) < 0 else { throw corrupt("entry's key is not above the one before", at: start) }
        let valueStart = reader.position
        position = valueStart + valueLength
        return Entry(key: key, value: valueStart..<position)
    }

    private func corrupt(_ message: String, at position: Int) -> EngineError {
        .corruption("table block: \(message) (byte \(position) of the block's contents)", path: path, offset: offset)
    }
}
