#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A cursor's decoded restart interval: its keys back to back (each rebuilt from the prefix it
/// shares with the one before) and each entry's places. Grown when an interval does not fit,
/// never shrunk, so that a cursor allocates nothing per entry once it has seen its largest
/// interval.
///
/// `@unchecked Sendable`: a cursor writes its storage only while it holds the only reference
/// (``BlockCursor`` checks `isKnownUniquelyReferenced` before every decode and copies a shared
/// one first), so storage that two copies of a cursor share is only ever read.
final class CursorStorage: @unchecked Sendable {
    struct Span {
        var keyStart: Int32
        var keyLength: Int32
        var valueStart: Int32
        var valueEnd: Int32
    }

    private(set) var keys: UnsafeMutableRawPointer
    private(set) var keyCapacity: Int
    /// The key bytes in use.
    var keyCount = 0
    private(set) var spans: UnsafeMutablePointer<Span>
    private(set) var spanCapacity: Int

    init(keyCapacity: Int = 512, spanCapacity: Int = 32) {
        self.keyCapacity = keyCapacity
        self.spanCapacity = spanCapacity
        keys = .allocate(byteCount: keyCapacity, alignment: 8)
        spans = .allocate(capacity: spanCapacity)
    }

    deinit {
        keys.deallocate()
        spans.deallocate()
    }

    func copy() -> CursorStorage {
        let copy = CursorStorage(keyCapacity: keyCapacity, spanCapacity: spanCapacity)
        copy.keys.copyMemory(from: keys, byteCount: keyCount)
        copy.keyCount = keyCount
        copy.spans.update(from: spans, count: spanCapacity)
        return copy
    }

    /// Makes room for `total` key bytes, keeping the ones in use.
    @inline(__always)
    func reserveKeys(_ total: Int) {
        guard total > keyCapacity else { return }
        var grown = keyCapacity * 2
        while grown < total { grown *= 2 }
        let fresh = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 8)
        fresh.copyMemory(from: keys, byteCount: keyCount)
        keys.deallocate()
        keys = fresh
        keyCapacity = grown
    }

    func growSpans() {
        let grown = UnsafeMutablePointer<Span>.allocate(capacity: spanCapacity * 2)
        grown.update(from: spans, count: spanCapacity)
        spans.deallocate()
        spans = grown
        spanCapacity *= 2
    }

    @inline(__always)
    func key(_ span: Span) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: keys + Int(span.keyStart), count: Int(span.keyLength))
    }
}

/// A cursor over one ``Block``'s entries in place, in either direction (as leveldb's
/// `Block::Iter`): entering a restart interval decodes it once, checking every entry's lengths
/// and that its key is above the one before, into reusable storage of the interval's keys
/// (rebuilt from their shared prefixes) and its entries' places; a step within it is an index
/// move. Keys are views into that storage and values views into the block, valid until the
/// cursor moves. Nothing is allocated per entry. A table cursor moves one block cursor from
/// block to block (``enter(next:)``, ``enter(previous:)``), which also checks that keys go on
/// ascending across the blocks' boundary.
///
/// `@unchecked Sendable`: besides the block and its storage (both safe to share: the block is
/// immutable, the storage copied before a shared one is written) it holds views of the current
/// entry into that memory, which no other copy writes.
struct BlockCursor: @unchecked Sendable {
    private(set) var block: Block
    private var storage: CursorStorage
    /// The decoded interval (-1 before any) and how many entries it has.
    private var interval = -1
    private var count = 0
    /// The current entry's index in the decoded interval.
    private var index = 0
    /// False before a seek and once the cursor has moved past either end.
    private(set) var isValid = false
    /// The current entry's key (valid until the cursor moves) and its stored value (kind,
    /// sequence, then the value or reference), in place: kept as views, set on every move, so
    /// that reading them is a load.
    private(set) var key = UnsafeRawBufferPointer(start: nil, count: 0)
    private(set) var value = UnsafeRawBufferPointer(start: nil, count: 0)

    init(_ block: Block) {
        self.block = block
        storage = CursorStorage()
    }

    /// Points the cursor at `block`, not yet positioned in it (its memory kept).
    mutating func reset(_ block: Block) {
        self.block = block
        interval = -1
        count = 0
        index = 0
        isValid = false
    }

    // MARK: The current entry

    /// Makes entry `i` of the decoded interval current.
    @inline(__always)
    private mutating func select(_ i: Int) {
        index = i
        let span = storage.spans[i]
        key = storage.key(span)
        value = UnsafeRawBufferPointer(start: block.bytes.baseAddress! + Int(span.valueStart), count: Int(span.valueEnd - span.valueStart))
    }

    /// The current entry's value's place in ``Block/bytes``.
    var valueRange: Range<Int> {
        let span = storage.spans[index]
        return Int(span.valueStart)..<Int(span.valueEnd)
    }

    // MARK: Moves

    /// To the first entry; invalid for an empty block.
    mutating func first() throws(EngineError) {
        guard block.restartCount > 0 else {
            isValid = false
            return
        }
        try decode(interval: 0)
        select(0)
    }

    /// To the last entry; invalid for an empty block.
    mutating func last() throws(EngineError) {
        guard block.restartCount > 0 else {
            isValid = false
            return
        }
        try decode(interval: block.restartCount - 1)
        select(count - 1)
    }

    /// To `next`'s first entry, checking that it is above the current one (the last of the
    /// block before, in a table); invalid for an empty block.
    mutating func enter(next: Block) throws(EngineError) {
        let boundary = isValid
        block = next
        guard next.restartCount > 0 else {
            isValid = false
            return
        }
        try decode(interval: 0, checkingAfterLast: boundary)
        select(0)
    }

    /// To `previous`'s last entry, checking that it is below the current one (the first of the
    /// block after, in a table); invalid for an empty block.
    mutating func enter(previous: Block) throws(EngineError) {
        let boundary = isValid
        block = previous
        guard previous.restartCount > 0 else {
            isValid = false
            return
        }
        try decode(interval: previous.restartCount - 1, checkingBeforeFirst: boundary)
        select(count - 1)
    }

    /// To the first entry whose key is at or above `target` (above it when `inclusive` is
    /// false); invalid when there is none in the block.
    mutating func seek(atOrAbove target: UnsafeRawBufferPointer, inclusive: Bool = true) throws(EngineError) {
        guard var current = try block.interval(atOrBefore: target) else {
            isValid = false
            return
        }
        while current < block.restartCount {
            try decode(interval: current)
            for i in 0..<count {
                let order = compareBytes(storage.key(storage.spans[i]), target)
                if order > 0 || (order == 0 && inclusive) {
                    select(i)
                    return
                }
            }
            current += 1
        }
        isValid = false
    }

    /// To the last entry whose key is at or below `target` (below it when `inclusive` is
    /// false); invalid when there is none in the block.
    mutating func seek(atOrBelow target: UnsafeRawBufferPointer, inclusive: Bool = true) throws(EngineError) {
        guard var current = try block.interval(atOrBefore: target) else {
            isValid = false
            return
        }
        while current >= 0 {
            try decode(interval: current)
            var i = count - 1
            while i >= 0 {
                let order = compareBytes(storage.key(storage.spans[i]), target)
                if order < 0 || (order == 0 && inclusive) {
                    select(i)
                    return
                }
                i -= 1
            }
            current -= 1
        }
        isValid = false
    }

    /// To the next entry and true, or false at the block's last entry (the cursor stays there).
    /// The cursor must be valid.
    mutating func next() throws(EngineError) -> Bool {
        if index + 1 < count {
            select(index + 1)
            return true
        }
        guard interval + 1 < block.restartCount else { return false }
        try decode(interval: interval + 1, checkingAfterLast: true)
        select(0)
        return true
    }

    /// To the previous entry and true, or false at the block's first entry (the cursor stays
    /// there). The cursor must be valid.
    mutating func previous() throws(EngineError) -> Bool {
        if index > 0 {
            select(index - 1)
            return true
        }
        guard interval > 0 else { return false }
        try decode(interval: interval - 1, checkingBeforeFirst: true)
        select(count - 1)
        return true
    }

    /// Leaves the cursor invalid (past an end of its table).
    mutating func invalidate() { isValid = false }

    // MARK: Decoding

    /// Decodes restart interval `number` of the block into the storage and makes the cursor
    /// valid. With `checkingAfterLast`, also checks that its first key is above the current
    /// entry's (the last decoded); with `checkingBeforeFirst`, that its last key is below it.
    private mutating func decode(
        interval number: Int, checkingAfterLast: Bool = false, checkingBeforeFirst: Bool = false
    ) throws(EngineError) {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        let storage = storage
        // The key the new interval must follow (or precede), kept at the storage's front while
        // the interval is decoded after it.
        var boundaryLength = 0
        if checkingAfterLast || checkingBeforeFirst {
            let kept = storage.spans[index]
            boundaryLength = Int(kept.keyLength)
            memmove(storage.keys, storage.keys + Int(kept.keyStart), boundaryLength)
        }
        storage.keyCount = boundaryLength
        let block = block
        var position = block.restart(number)
        let end = block.intervalEnd(number)
        var decoded = 0
        var previousStart = 0
        var previousLength = 0
        while position < end {
            let header = try BlockEntryHeader.decode(
                in: block, at: position, end: end, previousKeyLength: previousLength, first: decoded == 0)
            let keyLength = header.shared + header.rest.count
            let keyStart = storage.keyCount
            storage.reserveKeys(keyStart + keyLength)
            let keys = storage.keys
            if header.shared > 0 { (keys + keyStart).copyMemory(from: keys + previousStart, byteCount: header.shared) }
            if !header.rest.isEmpty {
                (keys + keyStart + header.shared).copyMemory(from: header.rest.baseAddress!, byteCount: header.rest.count)
            }
            storage.keyCount = keyStart + keyLength
            if decoded > 0 {
                // Equal to the key before up to `shared`: compare the rest with the rest of it.
                let before = UnsafeRawBufferPointer(start: keys + previousStart + header.shared, count: previousLength - header.shared)
                guard compareBytes(header.rest, before) > 0 else {
                    throw block.corrupt("entry's key is not above the one before", at: position)
                }
            }
            if decoded == storage.spanCapacity { storage.growSpans() }
            storage.spans[decoded] = CursorStorage.Span(
                keyStart: Int32(keyStart), keyLength: Int32(keyLength), valueStart: Int32(header.valueStart),
                valueEnd: Int32(header.valueEnd))
            decoded += 1
            previousStart = keyStart
            previousLength = keyLength
            position = header.valueEnd
        }
        guard decoded > 0 else { throw block.corrupt("restart interval \(number) holds no entry", at: block.restart(number)) }
        if checkingAfterLast || checkingBeforeFirst {
            let boundary = UnsafeRawBufferPointer(start: storage.keys, count: boundaryLength)
            if checkingAfterLast {
                guard compareBytes(storage.key(storage.spans[0]), boundary) > 0 else {
                    throw block.corrupt("the first key of restart interval \(number) is not above the key before it", at: block.restart(number))
                }
            } else {
                guard compareBytes(storage.key(storage.spans[decoded - 1]), boundary) < 0 else {
                    throw block.corrupt("the last key of restart interval \(number) is not below the key after it", at: block.restart(number))
                }
            }
        }
        interval = number
        count = decoded
        isValid = true
    }
}

extension Block {
    /// The place of `target`'s value in ``bytes``, or nil when the block holds no entry with that
    /// key: a binary search of the restart points (keys compared in place), then a walk of one
    /// interval whose keys are rebuilt in a temporary buffer, each checked to be above the one
    /// before. The buffer is on the stack while the interval's keys are at most
    /// ``findStackKeyLength`` bytes long (nothing allocated on the heap); an interval with a
    /// longer key is walked again with a heap buffer of the interval's size.
    func find(_ target: UnsafeRawBufferPointer) throws(EngineError) -> Range<Int>? {
        guard let interval = try interval(atOrBefore: target) else { return nil }
        let start = restart(interval)
        let end = intervalEnd(interval)
        // A key is at most as long as the bytes of the interval up to it.
        let half = Swift.min(end - start, Self.findStackKeyLength)
        let onStack = withUnsafeTemporaryAllocation(byteCount: 2 * half, alignment: 8) { scratch in
            search(target, from: start, to: end, scratch: scratch.baseAddress!, half: half)
        }
        switch onStack {
        case .found(let range): return range
        case .absent: return nil
        case .failed(let error): throw error
        case .keyTooLong:
            let heap = UnsafeMutableRawPointer.allocate(byteCount: 2 * (end - start), alignment: 8)
            defer { heap.deallocate() }
            switch search(target, from: start, to: end, scratch: heap, half: end - start) {
            case .found(let range): return range
            case .failed(let error): throw error
            case .absent, .keyTooLong: return nil
            }
        }
    }

    /// The longest key ``find(_:)`` rebuilds on the stack.
    static let findStackKeyLength = 512

    private enum Search {
        case found(Range<Int>)
        case absent
        case keyTooLong
        case failed(EngineError)
    }

    /// Walks the interval `start..<end` for `target`, rebuilding keys alternately in the two
    /// halves of `scratch`, each `half` bytes.
    private func search(_ target: UnsafeRawBufferPointer, from start: Int, to end: Int, scratch base: UnsafeMutableRawPointer, half: Int) -> Search {
        var position = start
        var previous = 0  // where the previous key starts in `scratch`
        var previousLength = 0
        var current = half  // the two halves alternate
        var first = true
        do throws(EngineError) {
            while position < end {
                let header = try BlockEntryHeader.decode(in: self, at: position, end: end, previousKeyLength: previousLength, first: first)
                let length = header.shared + header.rest.count
                guard length <= half else { return .keyTooLong }
                if header.shared > 0 { (base + current).copyMemory(from: base + previous, byteCount: header.shared) }
                if !header.rest.isEmpty {
                    (base + current + header.shared).copyMemory(from: header.rest.baseAddress!, byteCount: header.rest.count)
                }
                if !first {
                    let before = UnsafeRawBufferPointer(start: base + previous + header.shared, count: previousLength - header.shared)
                    guard compareBytes(header.rest, before) > 0 else {
                        throw corrupt("entry's key is not above the one before", at: position)
                    }
                }
                let order = compareBytes(UnsafeRawBufferPointer(start: base + current, count: length), target)
                if order == 0 { return .found(header.valueStart..<header.valueEnd) }
                if order > 0 { return .absent }
                swap(&previous, &current)
                previousLength = length
                first = false
                position = header.valueEnd
            }
            return .absent
        } catch {
            return .failed(error)
        }
    }

    /// Every entry, copied (salvage, verification, fuzzing and tests; reads use a cursor).
    func entries() throws(EngineError) -> [(key: [UInt8], value: Range<Int>)] {
        var cursor = BlockCursor(self)
        var result: [(key: [UInt8], value: Range<Int>)] = []
        try cursor.first()
        guard cursor.isValid else { return result }
        repeat { result.append((Array(cursor.key), cursor.valueRange)) } while try cursor.next()
        return result
    }
}
