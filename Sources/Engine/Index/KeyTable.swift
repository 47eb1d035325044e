#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// How a key is stored in a ``KeyTable``: an 8-byte sort prefix in an array of its own, and the
/// rest of the key (its tail) in a byte buffer its chunk shares with its neighbours.
///
/// The prefix is the key's first seven bytes (zero-padded) as a big-endian integer, shifted up one
/// byte, with `min(length, 8)` in the low byte. Prefix order agrees with byte order: if
/// `prefix(a) < prefix(b)` then `a < b` (a padding zero stands where the shorter key ended, and of
/// two keys equal in their first seven padded bytes, one of at most seven bytes is a prefix of the
/// other, so the shorter — lower length byte — comes first). Equal prefixes mean equal keys when
/// the length byte is below 8; when it is 8, both keys are longer than seven bytes and their tails
/// (`key[7...]`, never empty) settle the order. A key of at most seven bytes has no tail, so its
/// length is in its prefix: every key is stored exactly, nothing is shared across keys.
enum KeyOrder {
    /// The bytes of a key held in its prefix; the tail is the rest.
    static let prefixLength = 7

    @inline(__always)
    static func prefix(_ key: UnsafeRawBufferPointer) -> UInt64 {
        let count = key.count
        if count >= 8 {
            return UInt64(bigEndian: key.loadUnaligned(as: UInt64.self)) & ~0xFF | 8
        }
        var value: UInt64 = 0
        for index in 0..<prefixLength {
            value <<= 8
            if index < count { value |= UInt64(key[index]) }
        }
        return value << 8 | UInt64(count)
    }

    /// True when keys of this prefix have a tail (are longer than seven bytes).
    @inline(__always)
    static func hasTail(_ prefix: UInt64) -> Bool { prefix & 0xFF == 8 }

    /// The tail of `key`: its bytes after the seventh, or none for a key of up to seven bytes.
    @inline(__always)
    static func tail(_ key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        key.count > prefixLength ? UnsafeRawBufferPointer(rebasing: key[prefixLength...]) : UnsafeRawBufferPointer(start: nil, count: 0)
    }

    /// Byte order of two tails (shorter first on a common prefix).
    @inline(__always)
    static func compareTails(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        compareBytes(a, b)
    }

    /// The key whose prefix is `prefix` and whose tail is `tail`.
    static func key(prefix: UInt64, tail: UnsafeRawBufferPointer) -> [UInt8] {
        let headLength = hasTail(prefix) ? prefixLength : Int(prefix & 0xFF)
        return [UInt8](unsafeUninitializedCapacity: headLength + tail.count) { buffer, initialized in
            for index in 0..<headLength { buffer[index] = UInt8(truncatingIfNeeded: prefix >> (56 - 8 * index)) }
            if !tail.isEmpty { memcpy(buffer.baseAddress! + headLength, tail.baseAddress!, tail.count) }
            initialized = headLength + tail.count
        }
    }
}

/// Keys in byte order, each with a `Value`: a one-level B-tree, a sorted array of sorted chunks of
/// at most ``chunkCapacity`` keys, for point lookups, ordered scans and inserts that cost a binary
/// search plus a move inside one chunk.
///
/// A chunk keeps its keys inline, in one allocation (``Chunk``): the 8-byte prefixes (``KeyOrder``)
/// contiguous, the tails' end offsets, the values, then the tails concatenated. So a key costs its
/// prefix, a 4-byte offset, its length minus seven bytes of tail and its value — no heap buffer of
/// its own — and a search compares contiguous integers, reading a tail only when two prefixes are
/// equal. The table keeps the prefix of every chunk's last key for the search over chunks. A chunk
/// is allocated for a full chunk once (only its tail space grows, when keys are longer than the
/// ones it was sized for), splits in two when full and merges into a neighbour when it falls below
/// a quarter full; a bulk load fills chunks to 7/8, random inserts leave them about 0.7 full.
struct KeyTable<Value: BitwiseCopyable & Sendable>: Sendable {
    /// An insert moves about half a chunk (64 keys: ~1.7 KiB for 16-byte keys and 32-byte
    /// values); 64 measured a little faster than 128 for both lookups and inserts.
    static var chunkCapacity: Int { 64 }
    /// A bulk load fills chunks to 7/8, leaving room for inserts before the first split.
    static var loadFill: Int { chunkCapacity - chunkCapacity / 8 }

    /// Up to `capacity` keys in one byte buffer: their prefixes, then their tails' end offsets
    /// (UInt32), then their values, at fixed places for `capacity` entries, then the tails. One
    /// allocation, so a lookup touches one header and the few lines it reads, in one or two pages.
    struct Chunk: Sendable {
        private(set) var storage: [UInt8]
        private(set) var count = 0
        let capacity: Int
        /// The tail length of every key in the chunk when they all have the same (keys of one
        /// length, the common case), else -1. Then a tail's place follows from its index alone:
        /// a lookup reads the tail and the value at once, without first reading the end offsets.
        private var uniformTail = -1

        private var endsStart: Int { capacity * 8 }
        private var valuesStart: Int {
            let end = endsStart + capacity * 4
            let alignment = MemoryLayout<Value>.alignment
            return (end + alignment - 1) / alignment * alignment
        }
        private var tailsStart: Int { valuesStart + capacity * MemoryLayout<Value>.stride }
        var tailCapacity: Int { storage.count - tailsStart }
        /// The bytes of the tails in use.
        var tailBytes: Int { count == 0 ? 0 : uniformTail >= 0 ? count * uniformTail : Int(end(count - 1)) }

        /// A chunk of the table: room for a full chunk, plus the insert that causes a split.
        init(tailCapacity: Int) { self.init(capacity: KeyTable.chunkCapacity + 1, tailCapacity: tailCapacity) }

        init(capacity: Int, tailCapacity: Int) {
            self.capacity = capacity
            storage = []
            storage = Self.allocate(tailsStart + tailCapacity)
        }

        private static func allocate(_ size: Int) -> [UInt8] {
            [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
                initialized = size  // bytes are only read once written
            }
        }

        @inline(__always) func prefix(_ index: Int) -> UInt64 {
            storage.withUnsafeBytes { $0.load(fromByteOffset: index * 8, as: UInt64.self) }
        }
        @inline(__always) func end(_ index: Int) -> UInt32 {
            storage.withUnsafeBytes { $0.load(fromByteOffset: endsStart + index * 4, as: UInt32.self) }
        }
        @inline(__always) func start(_ index: Int) -> Int {
            uniformTail >= 0 ? index * uniformTail : index == 0 ? 0 : Int(end(index - 1))
        }
        @inline(__always) func value(_ index: Int) -> Value {
            storage.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: valuesStart + index * MemoryLayout<Value>.stride, as: Value.self) }
        }
        mutating func setValue(_ value: Value, at index: Int) {
            let offset = valuesStart + index * MemoryLayout<Value>.stride
            storage.withUnsafeMutableBytes { $0.storeBytes(of: value, toByteOffset: offset, as: Value.self) }
        }

        /// Calls `body` with key `index`'s tail.
        @inline(__always)
        func withTail<R>(_ index: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
            let start = start(index)
            let end = uniformTail >= 0 ? start + uniformTail : Int(end(index))
            return storage.withUnsafeBytes { bytes in
                body(UnsafeRawBufferPointer(rebasing: bytes[tailsStart + start..<tailsStart + end]))
            }
        }

        func key(at index: Int) -> [UInt8] { withTail(index) { KeyOrder.key(prefix: prefix(index), tail: $0) } }

        /// The order of key `index` against the key with `prefix` and `tail`.
        @inline(__always)
        func compare(_ index: Int, _ prefix: UInt64, _ tail: UnsafeRawBufferPointer) -> Int {
            let own = self.prefix(index)
            if own != prefix { return own < prefix ? -1 : 1 }
            guard KeyOrder.hasTail(prefix) else { return 0 }
            return withTail(index) { KeyOrder.compareTails($0, tail) }
        }

        /// The position of the first key ≥ the key with `prefix` and `tail`, and whether it is
        /// that key.
        @inline(__always)
        func lowerBound(_ prefix: UInt64, _ tail: UnsafeRawBufferPointer) -> (Int, Bool) {
            storage.withUnsafeBytes { bytes in
                let prefixes = bytes.assumingMemoryBound(to: UInt64.self)
                var low = 0
                var high = count
                while low < high {
                    let mid = (low + high) / 2
                    let own = prefixes[mid]
                    if own < prefix {
                        low = mid + 1
                    } else if own > prefix {
                        high = mid
                    } else {
                        // A prefix that holds the whole key names one key (keys are distinct).
                        guard KeyOrder.hasTail(prefix) else { return (mid, true) }
                        // Keys mid and maybe neighbours share the prefix: go on by whole keys in
                        // [low, high). A binary search, not a walk over the equal prefixes: a run
                        // loaded at open is one chunk of all its keys, and thousands of them can
                        // share their first seven bytes (one entity's records).
                        while low < high {
                            let probe = (low + high) / 2
                            if compare(probe, prefix, tail) < 0 { low = probe + 1 } else { high = probe }
                        }
                        return (low, low < count && compare(low, prefix, tail) == 0)
                    }
                }
                return (low, false)
            }
        }

        /// The value of the key with `prefix` and `tail`, if present: ``lowerBound(_:_:)`` for a
        /// point lookup, which reads the candidate's value along with its tail (the two loads
        /// overlap rather than wait for each other).
        @inline(__always)
        func value(_ prefix: UInt64, _ tail: UnsafeRawBufferPointer) -> Value? {
            storage.withUnsafeBytes { bytes in
                let prefixes = bytes.assumingMemoryBound(to: UInt64.self)
                var low = 0
                var high = count
                while low < high {
                    let mid = (low + high) / 2
                    let own = prefixes[mid]
                    if own < prefix {
                        low = mid + 1
                    } else if own > prefix {
                        high = mid
                    } else {
                        let candidate = bytes.loadUnaligned(
                            fromByteOffset: valuesStart + mid * MemoryLayout<Value>.stride, as: Value.self)
                        guard KeyOrder.hasTail(prefix) else { return candidate }
                        let unique = (mid == 0 || prefixes[mid - 1] != prefix) && (mid + 1 == count || prefixes[mid + 1] != prefix)
                        if unique { return compare(mid, prefix, tail) == 0 ? candidate : nil }
                        let (index, found) = lowerBound(prefix, tail)
                        return found ? self.value(index) : nil
                    }
                }
                return nil
            }
        }

        /// Makes room for `extra` more tail bytes.
        private mutating func reserveTails(_ extra: Int) {
            let needed = tailBytes + extra
            guard needed > tailCapacity else { return }
            var grown = Self.allocate(tailsStart + max(needed, tailCapacity + tailCapacity / 2))
            let used = tailsStart + tailBytes
            grown.withUnsafeMutableBytes { target in
                storage.withUnsafeBytes { source in
                    target.baseAddress!.copyMemory(from: source.baseAddress!, byteCount: used)
                }
            }
            storage = grown
        }

        mutating func insert(_ prefix: UInt64, _ tail: UnsafeRawBufferPointer, _ value: Value, at index: Int) {
            precondition(count < capacity && index <= count)
            let length = tail.count
            reserveTails(length)
            let start = start(index)
            let tailBytes = tailBytes
            if count == 0 { uniformTail = length } else if uniformTail != length { uniformTail = -1 }
            let stride = MemoryLayout<Value>.stride
            let (endsStart, valuesStart, tailsStart, count) = (endsStart, valuesStart, tailsStart, count)
            storage.withUnsafeMutableBytes { bytes in
                let base = bytes.baseAddress!
                let moved = count - index
                (base + (index + 1) * 8).copyMemory(from: base + index * 8, byteCount: moved * 8)
                base.storeBytes(of: prefix, toByteOffset: index * 8, as: UInt64.self)
                let ends = (base + endsStart).assumingMemoryBound(to: UInt32.self)
                var later = count
                while later > index {
                    ends[later] = ends[later - 1] &+ UInt32(length)
                    later -= 1
                }
                ends[index] = UInt32(start + length)
                let values = base + valuesStart
                (values + (index + 1) * stride).copyMemory(from: values + index * stride, byteCount: moved * stride)
                (values + index * stride).storeBytes(of: value, as: Value.self)
                if length > 0 {
                    let tails = base + tailsStart
                    (tails + start + length).copyMemory(from: tails + start, byteCount: tailBytes - start)
                    (tails + start).copyMemory(from: tail.baseAddress!, byteCount: length)
                }
            }
            self.count += 1
        }

        mutating func append(_ prefix: UInt64, _ tail: UnsafeRawBufferPointer, _ value: Value) {
            precondition(count < capacity)
            let length = tail.count
            reserveTails(length)
            let start = tailBytes
            if count == 0 { uniformTail = length } else if uniformTail != length { uniformTail = -1 }
            let (index, endsStart, valuesStart, tailsStart) = (count, endsStart, valuesStart, tailsStart)
            storage.withUnsafeMutableBytes { bytes in
                let base = bytes.baseAddress!
                base.storeBytes(of: prefix, toByteOffset: index * 8, as: UInt64.self)
                base.storeBytes(of: UInt32(start + length), toByteOffset: endsStart + index * 4, as: UInt32.self)
                (base + valuesStart + index * MemoryLayout<Value>.stride).storeBytes(of: value, as: Value.self)
                if length > 0 { (base + tailsStart + start).copyMemory(from: tail.baseAddress!, byteCount: length) }
            }
            count += 1
        }

        mutating func remove(at index: Int) -> Value {
            let removed = value(index)
            let start = start(index)
            let length = uniformTail >= 0 ? uniformTail : Int(end(index)) - start
            let tailBytes = tailBytes
            let stride = MemoryLayout<Value>.stride
            let (endsStart, valuesStart, tailsStart, count) = (endsStart, valuesStart, tailsStart, count)
            storage.withUnsafeMutableBytes { bytes in
                let base = bytes.baseAddress!
                let moved = count - index - 1
                (base + index * 8).copyMemory(from: base + (index + 1) * 8, byteCount: moved * 8)
                let ends = (base + endsStart).assumingMemoryBound(to: UInt32.self)
                for later in index..<count - 1 { ends[later] = ends[later + 1] &- UInt32(length) }
                let values = base + valuesStart
                (values + index * stride).copyMemory(from: values + (index + 1) * stride, byteCount: moved * stride)
                if length > 0 {
                    let tails = base + tailsStart
                    (tails + start).copyMemory(from: tails + start + length, byteCount: tailBytes - start - length)
                }
            }
            self.count -= 1
            return removed
        }

        /// Moves the keys from `index` on into a new chunk, which it returns.
        mutating func split(at index: Int) -> Chunk {
            let start = start(index)
            let moved = count - index
            // Room for as many keys again of the average tail length.
            var upper = Chunk(tailCapacity: (tailBytes - start) / max(moved, 1) * KeyTable.chunkCapacity)
            for i in index..<count {
                withTail(i) { upper.append(prefix(i), $0, value(i)) }
            }
            count = index
            if uniformTail < 0, count > 0 {
                // The keys left may all have one length now.
                let first = Int(end(0))
                if (1..<count).allSatisfy({ Int(end($0)) - Int(end($0 - 1)) == first }) { uniformTail = first }
            }
            return upper
        }

        /// Appends every key of `other`, whose keys all follow this chunk's.
        mutating func append(contentsOf other: Chunk) {
            reserveTails(other.tailBytes)
            for i in 0..<other.count {
                other.withTail(i) { append(other.prefix(i), $0, other.value(i)) }
            }
        }
    }

    private(set) var chunks: [Chunk] = []
    /// The prefix of every chunk's last key, for the search over chunks.
    private var lastPrefixes: [UInt64] = []
    private(set) var count = 0

    init() {}

    /// A position: a chunk and an index in it. Positions from ``find(_:)`` are normalized: the
    /// index lies inside its chunk, or the position is (`chunks.count`, 0), the end.
    struct Position: Equatable, Comparable {
        var chunk: Int
        var index: Int
        static func < (a: Position, b: Position) -> Bool { (a.chunk, a.index) < (b.chunk, b.index) }
    }

    var end: Position { Position(chunk: chunks.count, index: 0) }

    /// The index of the first chunk from `start` on whose last key is ≥ the key (the last chunk
    /// when none is).
    @inline(__always)
    private func chunkIndex(_ prefix: UInt64, _ tail: UnsafeRawBufferPointer, from start: Int = 0) -> Int {
        var low = start
        var high = chunks.count - 1
        lastPrefixes.withUnsafeBufferPointer { lasts in
            while low < high {
                let mid = (low + high) / 2
                let last = lasts[mid]
                if last < prefix || (last == prefix && chunks[mid].compare(chunks[mid].count - 1, prefix, tail) < 0) {
                    low = mid + 1
                } else {
                    high = mid
                }
            }
        }
        return low
    }

    /// Where `key` is, or where it would go (normalized), and whether it is there.
    func find(_ key: [UInt8]) -> (Position, Bool) {
        key.withUnsafeBytes { find($0) }
    }

    /// The same, for the key whose bytes are `key`.
    func find(_ key: UnsafeRawBufferPointer) -> (Position, Bool) {
        guard !chunks.isEmpty else { return (end, false) }
        let prefix = KeyOrder.prefix(key)
        let tail = KeyOrder.tail(key)
        let c = chunkIndex(prefix, tail)
        let (index, found) = chunks[c].lowerBound(prefix, tail)
        return (normalized(Position(chunk: c, index: index)), found)
    }

    /// Like ``find(_:)``, trying first the position right after `hint` (that of a smaller key):
    /// keys looked up in ascending order are often neighbours.
    func find(_ key: UnsafeRawBufferPointer, after hint: Position?) -> (Position, Bool) {
        if let hint {
            let next = position(after: hint)
            if next.chunk < chunks.count,
                chunks[next.chunk].compare(next.index, KeyOrder.prefix(key), KeyOrder.tail(key)) == 0
            {
                return (next, true)
            }
        }
        return find(key)
    }

    private func normalized(_ position: Position) -> Position {
        if position.chunk < chunks.count, position.index >= chunks[position.chunk].count {
            return Position(chunk: position.chunk + 1, index: 0)
        }
        return position
    }

    /// The value of `key`, if present.
    subscript(key: [UInt8]) -> Value? {
        key.withUnsafeBytes { bytes in value(KeyOrder.prefix(bytes), KeyOrder.tail(bytes)) }
    }

    /// The value of the key with `prefix` and `tail`, if present.
    func value(_ prefix: UInt64, _ tail: UnsafeRawBufferPointer) -> Value? {
        guard !chunks.isEmpty else { return nil }
        return chunks[chunkIndex(prefix, tail)].value(prefix, tail)
    }

    func key(at position: Position) -> [UInt8] { chunks[position.chunk].key(at: position.index) }

    func value(at position: Position) -> Value { chunks[position.chunk].value(position.index) }

    /// The length of the key at `position`, without building it.
    func keyLength(at position: Position) -> Int {
        let prefix = chunks[position.chunk].prefix(position.index)
        guard KeyOrder.hasTail(prefix) else { return Int(prefix & 0xFF) }
        return KeyOrder.prefixLength + chunks[position.chunk].withTail(position.index) { $0.count }
    }

    mutating func setValue(_ value: Value, at position: Position) {
        chunks[position.chunk].setValue(value, at: position.index)
    }

    /// Sets `key` to `value`; returns the value it replaced, if any.
    @discardableResult
    mutating func updateValue(_ value: Value, forKey key: [UInt8]) -> Value? {
        key.withUnsafeBytes { bytes in
            let prefix = KeyOrder.prefix(bytes)
            let tail = KeyOrder.tail(bytes)
            guard !chunks.isEmpty else {
                var chunk = Chunk(tailCapacity: tail.count * (Self.chunkCapacity + 1))
                chunk.append(prefix, tail, value)
                chunks = [chunk]
                lastPrefixes = [prefix]
                count = 1
                return nil
            }
            let c = chunkIndex(prefix, tail)
            let (index, found) = chunks[c].lowerBound(prefix, tail)
            if found {
                defer { chunks[c].setValue(value, at: index) }
                return chunks[c].value(index)
            }
            chunks[c].insert(prefix, tail, value, at: index)
            count += 1
            if chunks[c].count > Self.chunkCapacity {
                // Keys added in ascending order (new records with rising ids) land at the table's
                // end: split that chunk at ``loadFill``, not in halves, so that such a load
                // leaves chunks 7/8 full, as a bulk load does, rather than half full.
                let atEnd = c == chunks.count - 1 && index == chunks[c].count - 1
                let upper = chunks[c].split(at: atEnd ? Self.loadFill : chunks[c].count / 2)
                chunks.insert(upper, at: c + 1)
                lastPrefixes.insert(upper.prefix(upper.count - 1), at: c + 1)
            }
            lastPrefixes[c] = chunks[c].prefix(chunks[c].count - 1)
            return nil
        }
    }

    /// Sets each key of `batch` to its value, leaving the table as ``updateValue(_:forKey:)``
    /// would one key at a time, in one pass over the chunks: the batch's keys are matched to
    /// their chunks in order (a search over the chunks from the last one touched), a chunk that
    /// takes one key inserts it in place, and one that takes several (or must split) is merged
    /// with them into one or more new chunks (filled to ``loadFill`` at the table's end, as
    /// ascending inserts and bulk loads leave them, evenly elsewhere); the chunk list takes the
    /// split chunks' pieces at the end (shifted once per split for a few, rebuilt once for
    /// many). Calls `replaced(i, old)`, in ascending order, for each key `i`
    /// of the batch that was present, with the value it replaces.
    mutating func updateValues(_ batch: AscendingBatch, replaced: (Int, Value) -> Void) {
        let n = batch.count
        guard n > 0 else { return }
        if chunks.isEmpty {
            // One empty chunk, which the merge below fills (and splits).
            chunks = [Chunk(tailCapacity: 0)]
            lastPrefixes = [0]
        }
        // Chunks that split, with what replaces them, ascending.
        var splits: [(chunk: Int, pieces: [Chunk])] = []
        var c = 0
        var i = 0
        while i < n {
            c = batch.withTail(i) { chunkIndex(batch.prefixes[i], $0, from: c) }
            // The batch's keys up to this chunk's last key; all the rest for the last chunk.
            var j = i + 1
            if c < chunks.count - 1 {
                let last = chunks[c].count - 1
                while j < n, batch.withTail(j, { chunks[c].compare(last, batch.prefixes[j], $0) }) >= 0 { j += 1 }
            } else {
                j = n
            }
            if j - i == 1, chunks[c].count < Self.chunkCapacity {
                // One key, and room for it: in place, as a lone insert.
                let prefix = batch.prefixes[i]
                batch.withTail(i) { tail in
                    let (index, found) = chunks[c].lowerBound(prefix, tail)
                    if found {
                        replaced(i, chunks[c].value(index))
                        chunks[c].setValue(batch.values[i], at: index)
                    } else {
                        chunks[c].insert(prefix, tail, batch.values[i], at: index)
                        count += 1
                    }
                }
                lastPrefixes[c] = chunks[c].prefix(chunks[c].count - 1)
            } else {
                let pieces = merged(c, with: batch, i..<j, replaced: replaced)
                if pieces.count == 1 {
                    chunks[c] = pieces[0]
                    lastPrefixes[c] = pieces[0].prefix(pieces[0].count - 1)
                } else {
                    splits.append((c, pieces))
                }
            }
            i = j
            c += 1
        }
        guard !splits.isEmpty else { return }
        if splits.count <= 8 {
            // A few splits: each shifts the chunks after it, as a lone insert's split does
            // (a move of the list's tail, highest first so that each index still holds).
            for (c, pieces) in splits.reversed() {
                chunks.replaceSubrange(c...c, with: pieces)
                lastPrefixes.replaceSubrange(c...c, with: pieces.map { $0.prefix($0.count - 1) })
            }
            return
        }
        // Many: the list rebuilt once.
        let added = splits.reduce(0) { $0 + $1.pieces.count - 1 }
        let old = chunks
        chunks = []
        lastPrefixes = []
        chunks.reserveCapacity(old.count + added)
        lastPrefixes.reserveCapacity(old.count + added)
        var next = 0
        for (index, chunk) in old.enumerated() {
            if next < splits.count, splits[next].chunk == index {
                for piece in splits[next].pieces {
                    chunks.append(piece)
                    lastPrefixes.append(piece.prefix(piece.count - 1))
                }
                next += 1
            } else {
                chunks.append(chunk)
                lastPrefixes.append(chunk.prefix(chunk.count - 1))
            }
        }
    }

    /// The keys of chunk `c` merged with the batch's keys `run` (which all belong in it): one
    /// chunk when they fit, else several, filled to ``loadFill`` for the table's last chunk and
    /// evenly (each at most ``loadFill``) for another. Counts the keys added.
    private mutating func merged(
        _ c: Int, with batch: AscendingBatch, _ run: Range<Int>, replaced: (Int, Value) -> Void
    ) -> [Chunk] {
        let old = chunks[c]
        // The merged order: an old key's index, or a batch key's as `~index`.
        var order: [Int] = []
        order.reserveCapacity(old.count + run.count)
        var tailBytes = 0
        var a = 0
        var b = run.lowerBound
        while a < old.count || b < run.upperBound {
            let comparison: Int
            if a == old.count {
                comparison = 1
            } else if b == run.upperBound {
                comparison = -1
            } else {
                comparison = batch.withTail(b) { old.compare(a, batch.prefixes[b], $0) }
            }
            if comparison < 0 {
                order.append(a)
                tailBytes += old.withTail(a) { $0.count }
                a += 1
            } else {
                if comparison == 0 {
                    replaced(b, old.value(a))
                    a += 1
                } else {
                    count += 1
                }
                order.append(~b)
                tailBytes += batch.tailLength(b)
                b += 1
            }
        }
        let total = order.count
        var sizes: [Int]
        if total <= Self.chunkCapacity {
            sizes = [total]
        } else if c == chunks.count - 1 {
            sizes = Array(repeating: Self.loadFill, count: total / Self.loadFill)
            if total % Self.loadFill > 0 { sizes.append(total % Self.loadFill) }
        } else {
            let pieces = (total + Self.loadFill - 1) / Self.loadFill
            sizes = (0..<pieces).map { total / pieces + ($0 < total % pieces ? 1 : 0) }
        }
        let averageTail = (tailBytes + total - 1) / total
        var result: [Chunk] = []
        result.reserveCapacity(sizes.count)
        var start = 0
        for size in sizes {
            var chunk = Chunk(tailCapacity: averageTail * (Self.chunkCapacity + 1))
            for entry in order[start..<start + size] {
                if entry >= 0 {
                    old.withTail(entry) { chunk.append(old.prefix(entry), $0, old.value(entry)) }
                } else {
                    batch.withTail(~entry) { chunk.append(batch.prefixes[~entry], $0, batch.values[~entry]) }
                }
            }
            result.append(chunk)
            start += size
        }
        return result
    }

    /// Removes `key`; returns its value, if it was present.
    @discardableResult
    mutating func removeValue(forKey key: [UInt8]) -> Value? {
        let (position, found) = find(key)
        guard found else { return nil }
        return remove(at: position)
    }

    mutating func remove(at position: Position) -> Value {
        let c = position.chunk
        let value = chunks[c].remove(at: position.index)
        count -= 1
        if chunks[c].count == 0 {
            chunks.remove(at: c)
            lastPrefixes.remove(at: c)
            return value
        }
        lastPrefixes[c] = chunks[c].prefix(chunks[c].count - 1)
        // A chunk below a quarter full joins a neighbour that has room (at most 3/4 full after):
        // after many removes, memory follows the keys left rather than the most ever held.
        if chunks[c].count < Self.chunkCapacity / 4 {
            let limit = Self.chunkCapacity * 3 / 4
            if c + 1 < chunks.count, chunks[c].count + chunks[c + 1].count <= limit {
                mergeWithNext(c)
            } else if c > 0, chunks[c - 1].count + chunks[c].count <= limit {
                mergeWithNext(c - 1)
            }
        }
        return value
    }

    /// Removes the keys at `positions` (strictly ascending, found in the table as it is) at once:
    /// each chunk loses its keys, then, in one move of the chunk list, the chunks of the stretch
    /// they span (and its two neighbours) that emptied are dropped and one under a quarter full
    /// joins a neighbour that has room (at most 3/4 full after), as removing them one at a time
    /// would leave them.
    mutating func remove(at positions: [Position]) {
        guard let first = positions.first?.chunk, let last = positions.last?.chunk else { return }
        // Highest first, so that each index still names its key.
        for position in positions.reversed() { _ = chunks[position.chunk].remove(at: position.index) }
        count -= positions.count
        let stretch = max(first - 1, 0)...min(last + 1, chunks.count - 1)
        let (quarter, limit) = (Self.chunkCapacity / 4, Self.chunkCapacity * 3 / 4)
        // Chunks kept are moved down to `kept` (the last one kept so far), in place.
        var kept = stretch.lowerBound - 1
        for c in stretch where chunks[c].count > 0 {
            if kept >= stretch.lowerBound, chunks[kept].count < quarter || chunks[c].count < quarter,
                chunks[kept].count + chunks[c].count <= limit
            {
                let next = chunks[c]
                chunks[kept].append(contentsOf: next)
            } else {
                kept += 1
                if kept != c { chunks.swapAt(kept, c) }
            }
            lastPrefixes[kept] = chunks[kept].prefix(chunks[kept].count - 1)
        }
        chunks.removeSubrange(kept + 1..<stretch.upperBound + 1)
        lastPrefixes.removeSubrange(kept + 1..<stretch.upperBound + 1)
    }

    private mutating func mergeWithNext(_ c: Int) {
        let next = chunks.remove(at: c + 1)
        lastPrefixes.remove(at: c + 1)
        chunks[c].append(contentsOf: next)
        lastPrefixes[c] = chunks[c].prefix(chunks[c].count - 1)
    }

    /// True when the table keeps its own rules (for tests): every chunk holds 1 to
    /// ``chunkCapacity`` keys, keys ascend strictly across the whole table, each chunk's last
    /// prefix is recorded, and ``count`` is the number of keys.
    var isWellFormed: Bool {
        guard chunks.count == lastPrefixes.count, chunks.reduce(0, { $0 + $1.count }) == count else { return false }
        var previous: [UInt8]? = nil
        for (c, chunk) in chunks.enumerated() {
            guard (1...Self.chunkCapacity).contains(chunk.count), lastPrefixes[c] == chunk.prefix(chunk.count - 1) else { return false }
            for index in 0..<chunk.count {
                let key = chunk.key(at: index)
                if let previous, compareBytes(previous, key) >= 0 { return false }
                previous = key
            }
        }
        return true
    }

    /// The position after `position` (which is not the end).
    @inline(__always)
    func position(after position: Position) -> Position {
        position.index + 1 < chunks[position.chunk].count
            ? Position(chunk: position.chunk, index: position.index + 1) : Position(chunk: position.chunk + 1, index: 0)
    }

    /// The position before `position`, or nil at the start.
    @inline(__always)
    func position(before position: Position) -> Position? {
        if position.index > 0 { return Position(chunk: position.chunk, index: position.index - 1) }
        guard position.chunk > 0 else { return nil }
        return Position(chunk: position.chunk - 1, index: chunks[position.chunk - 1].count - 1)
    }

    /// The positions of up to `limit` keys in `range`, ascending (descending when `reverse`),
    /// starting strictly after `cursor` in that direction when it is given: a scan resumes from
    /// the last key it returned. Costs a binary search plus the keys returned.
    func positions(in range: LogStore.KeyRange, after cursor: [UInt8]?, reverse: Bool, limit: Int) -> [Position] {
        guard !chunks.isEmpty, limit > 0 else { return [] }
        var result: [Position] = []
        if !reverse {
            // The first position at or past the low end and past the cursor.
            var position = Position(chunk: 0, index: 0)
            switch range.lower {
            case .unbounded: break
            case .inclusive(let key): position = self.position(of: key, after: false)
            case .exclusive(let key): position = self.position(of: key, after: true)
            }
            if let cursor { position = max(position, self.position(of: cursor, after: true)) }
            while position.chunk < chunks.count, result.count < limit {
                guard isBelowUpper(position, range.upper) else { break }
                result.append(position)
                position = self.position(after: position)
            }
        } else {
            // One before the first position past the high end and at or past the cursor.
            var position = end
            switch range.upper {
            case .unbounded: break
            case .inclusive(let key): position = self.position(of: key, after: true)
            case .exclusive(let key): position = self.position(of: key, after: false)
            }
            if let cursor { position = min(position, self.position(of: cursor, after: false)) }
            while result.count < limit, let previous = self.position(before: position) {
                guard isAboveLower(previous, range.lower) else { break }
                result.append(previous)
                position = previous
            }
        }
        return result
    }

    /// The order of the key at `position` against `key`, compared in place.
    private func compare(_ position: Position, _ key: [UInt8]) -> Int {
        key.withUnsafeBytes { bytes in
            chunks[position.chunk].compare(position.index, KeyOrder.prefix(bytes), KeyOrder.tail(bytes))
        }
    }

    private func isBelowUpper(_ position: Position, _ upper: LogStore.KeyRange.Bound) -> Bool {
        switch upper {
        case .unbounded: true
        case .inclusive(let bound): compare(position, bound) <= 0
        case .exclusive(let bound): compare(position, bound) < 0
        }
    }

    private func isAboveLower(_ position: Position, _ lower: LogStore.KeyRange.Bound) -> Bool {
        switch lower {
        case .unbounded: true
        case .inclusive(let bound): compare(position, bound) >= 0
        case .exclusive(let bound): compare(position, bound) > 0
        }
    }

    /// The position of the first key ≥ `key` (> `key` when `after`), normalized.
    private func position(of key: [UInt8], after: Bool) -> Position {
        let (position, found) = find(key)
        return found && after ? self.position(after: position) : position
    }
}

extension KeyTable {
    /// Builds a table from keys appended in strictly ascending order (``KeyOrder``), filling
    /// chunks to ``loadFill``.
    struct Builder {
        private var table = KeyTable()
        private var chunk: Chunk?
        /// The average tail length so far, to size each chunk's tail buffer.
        private var tailBytes = 0

        init() {}

        mutating func append(_ prefix: UInt64, _ tail: UnsafeRawBufferPointer, _ value: Value) {
            if chunk == nil || chunk!.count >= KeyTable.loadFill { startChunk(tail.count) }
            chunk!.append(prefix, tail, value)
            tailBytes += tail.count
            table.count += 1
        }

        /// The keys appended so far.
        var count: Int { table.count }

        /// The order of the last key appended against the key with `prefix` and `tail`; nil
        /// before the first.
        func compareLast(_ prefix: UInt64, _ tail: UnsafeRawBufferPointer) -> Int? {
            guard let chunk, chunk.count > 0 else { return nil }
            return chunk.compare(chunk.count - 1, prefix, tail)
        }

        /// The value of the last key appended; nil before the first.
        var lastValue: Value? {
            guard let chunk, chunk.count > 0 else { return nil }
            return chunk.value(chunk.count - 1)
        }

        /// Replaces the value of the last key appended (nothing before the first).
        mutating func setLastValue(_ value: Value) {
            guard let last = chunk.map({ $0.count - 1 }), last >= 0 else { return }
            chunk?.setValue(value, at: last)
        }

        private mutating func startChunk(_ tailLength: Int) {
            if let chunk { push(chunk) }
            let average = table.count == 0 ? tailLength : (tailBytes + table.count - 1) / table.count
            chunk = Chunk(tailCapacity: average * (KeyTable.chunkCapacity + 1))
        }

        private mutating func push(_ chunk: Chunk) {
            table.lastPrefixes.append(chunk.prefix(chunk.count - 1))
            table.chunks.append(chunk)
        }

        consuming func finish() -> KeyTable {
            if let chunk { push(chunk) }
            return table
        }
    }
}

extension KeyTable {
    /// Keys in strictly ascending order (``KeyOrder``), each with a value, their tails in one
    /// buffer: what ``KeyTable/updateValues(_:replaced:)`` merges into a table in one pass.
    struct AscendingBatch {
        private(set) var prefixes: [UInt64] = []
        /// Where each key's tail ends in `tails`.
        private var tailEnds: [Int] = []
        private var tails: [UInt8] = []
        private(set) var values: [Value] = []

        init(capacity: Int = 0) {
            prefixes.reserveCapacity(capacity)
            tailEnds.reserveCapacity(capacity)
            values.reserveCapacity(capacity)
        }

        var count: Int { prefixes.count }

        /// Appends `key` with `value`; `key` must follow every key appended before.
        mutating func append(_ key: UnsafeRawBufferPointer, _ value: Value) {
            prefixes.append(KeyOrder.prefix(key))
            tails.append(contentsOf: KeyOrder.tail(key))
            tailEnds.append(tails.count)
            values.append(value)
        }

        /// The length of key `index`'s tail.
        func tailLength(_ index: Int) -> Int { tailEnds[index] - (index == 0 ? 0 : tailEnds[index - 1]) }

        /// Calls `body` with key `index`'s tail.
        @inline(__always)
        func withTail<R>(_ index: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
            let start = index == 0 ? 0 : tailEnds[index - 1]
            return tails.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start..<tailEnds[index]])) }
        }

        /// Key `index`'s bytes.
        func key(_ index: Int) -> [UInt8] { withTail(index) { KeyOrder.key(prefix: prefixes[index], tail: $0) } }
    }
}
