/// One table block's raw contents (``BlockBuilder``), inflated and checked once: its bytes in one
/// allocation of their own and its restart array verified (count, order, bounds), so that a block
/// taken from the cache is ready to search. Entries are decoded in place by a ``BlockCursor``,
/// which checks every length against the bytes before use: a damaged block is
/// ``EngineError/Code/corruption`` naming the table and the block's offset, never a trap.
///
/// `@unchecked Sendable`: the bytes are written once, in `init`, and only read afterwards; they
/// are freed in `deinit`, when no cursor or cache holds the block any more.
final class Block: @unchecked Sendable {
    /// The block's raw contents: entries, then the restart array and its count.
    let bytes: UnsafeRawBufferPointer
    /// How many restart points (and so restart intervals) the block has; 0 for an empty block.
    let restartCount: Int
    /// Where the entries end and the restart array begins.
    let entriesEnd: Int
    /// For errors: the table and the block's offset in it.
    let path: String
    let offset: UInt64

    init(raw: [UInt8], path: String, offset: UInt64) throws(EngineError) {
        self.path = path
        self.offset = offset
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(raw.count, 1), alignment: 8)
        raw.withUnsafeBytes { storage.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        bytes = UnsafeRawBufferPointer(rebasing: storage[0..<raw.count])
        func fail(_ message: String) -> EngineError {
            storage.deallocate()
            return .corruption(message, path: path, offset: offset)
        }
        guard raw.count >= 4 else { throw fail("table block of \(raw.count) bytes has no restart count") }
        let count = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: raw.count - 4, as: UInt32.self)))
        guard count <= (raw.count - 4) / 4 else {
            throw fail("table block declares \(count) restart points, more than its \(raw.count) bytes hold")
        }
        let entriesEnd = raw.count - 4 - 4 * count
        guard (count == 0) == (entriesEnd == 0) else {
            throw fail("table block's restart count \(count) does not match its \(entriesEnd) bytes of entries")
        }
        var previous = -1
        for i in 0..<count {
            let restart = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: entriesEnd + 4 * i, as: UInt32.self)))
            guard entriesEnd > restart, previous < restart, i > 0 || restart == 0 else {
                throw fail("table block's restart point \(i) (\(restart)) is out of order or past its entries")
            }
            previous = restart
        }
        self.restartCount = count
        self.entriesEnd = entriesEnd
    }

    /// An empty block (no entries, no restart points): what a cursor points at before its first.
    static let empty = Block()

    private init() {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: 4, alignment: 8)
        storage.storeBytes(of: UInt32(0), as: UInt32.self)
        bytes = UnsafeRawBufferPointer(storage)
        restartCount = 0
        entriesEnd = 0
        path = ""
        offset = 0
    }

    deinit { UnsafeMutableRawPointer(mutating: bytes.baseAddress!).deallocate() }

    /// Where restart interval `index` begins (checked at init: ascending, inside the entries).
    @inline(__always)
    func restart(_ index: Int) -> Int {
        Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: entriesEnd + 4 * index, as: UInt32.self)))
    }

    /// Where restart interval `index` ends.
    @inline(__always)
    func intervalEnd(_ index: Int) -> Int { index + 1 < restartCount ? restart(index + 1) : entriesEnd }

    /// The bytes the block holds, for the cache's accounting.
    var byteCount: Int { bytes.count }

    func corrupt(_ message: String, at position: Int) -> EngineError {
        .corruption("table block: \(message) (byte \(position) of the block's contents)", path: path, offset: offset)
    }

    /// The key of restart interval `index`'s first entry, in place (a restart entry shares
    /// nothing with the one before, so its key is stored whole).
    func restartKey(_ index: Int) throws(EngineError) -> UnsafeRawBufferPointer {
        try BlockEntryHeader.decode(in: self, at: restart(index), end: intervalEnd(index), previousKeyLength: 0, first: true).rest
    }

    /// The last interval whose first key is at or below `target` (0 when every one is above it),
    /// by binary search over the restart points, keys compared in place; nil for an empty block.
    func interval(atOrBefore target: UnsafeRawBufferPointer) throws(EngineError) -> Int? {
        guard restartCount > 0 else { return nil }
        var low = 0
        var high = restartCount - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if compareBytes(try restartKey(middle), target) <= 0 { low = middle } else { high = middle - 1 }
        }
        return low
    }
}

/// One entry's header as stored (three varints: the key bytes it shares with the previous key,
/// the length of the rest, the value's length), then the rest of its key and its value, all in
/// place in the block's bytes and checked against the interval's end.
struct BlockEntryHeader {
    var shared: Int
    /// The key's bytes after the shared prefix.
    var rest: UnsafeRawBufferPointer
    /// Where the value lies in the block's bytes.
    var valueStart: Int
    var valueEnd: Int

    @inline(__always)
    static func decode(
        in block: Block, at start: Int, end: Int, previousKeyLength: Int, first: Bool
    ) throws(EngineError) -> BlockEntryHeader {
        let bytes = block.bytes
        var position = start
        guard let shared = varint(bytes, &position, end: end, limit: LogFormat.maxKeyLength),
            let unshared = varint(bytes, &position, end: end, limit: LogFormat.maxKeyLength),
            let valueLength = varint(bytes, &position, end: end, limit: LogFormat.maxBlockRawLength)
        else { throw block.corrupt("entry header is cut short or out of range", at: start) }
        guard !first || shared == 0 else { throw block.corrupt("entry at a restart point shares \(shared) bytes", at: start) }
        guard shared <= previousKeyLength, shared + unshared >= 1, shared + unshared <= LogFormat.maxKeyLength else {
            throw block.corrupt("entry declares a key of \(shared) + \(unshared) bytes", at: start)
        }
        guard end - position >= unshared, end - position - unshared >= valueLength else {
            throw block.corrupt("entry runs past the end of its restart interval", at: start)
        }
        let rest = UnsafeRawBufferPointer(rebasing: bytes[position..<position + unshared])
        let valueStart = position + unshared
        return BlockEntryHeader(shared: shared, rest: rest, valueStart: valueStart, valueEnd: valueStart + valueLength)
    }

    /// A LEB128 varint of at most five bytes at `position` (moved past it), below `end`; nil
    /// when it runs past `end` or is above `limit`.
    @inline(__always)
    private static func varint(_ bytes: UnsafeRawBufferPointer, _ position: inout Int, end: Int, limit: Int) -> Int? {
        var result = 0
        var shift = 0
        while shift <= 28, position < end {
            let byte = bytes[position]
            position += 1
            result |= Int(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result <= limit ? result : nil }
            shift += 7
        }
        return nil
    }
}
