import Foundation

/// The sort keys of a fetch's matches as plain values, the slots that hold them, and the order
/// they put the matches in: what ``FetchWindow`` keeps of each match and compares.
///
/// Each match held takes a *slot*. For each sort descriptor the slot holds a ``Key``: a group
/// byte (the kind of value, in the order of ``PropertyValue``'s groups), a 64-bit word whose
/// unsigned order is the order within the group, and, where the word cannot decide alone, a
/// *tail* of bytes in one buffer shared by every key, compared as bytes when the words are equal.
/// A tie key follows (the primary key's 16 bytes as two words, or the order the matches
/// arrived in). Comparing two slots reads these through pointers: no retain, release or
/// allocation.
///
/// The keys order exactly as ``PredicateEvaluator/compareKeys(_:_:_:)`` does, then by the tie key:
/// - by group first: null, a to-one without a target, Booleans (`false`, `true`), numbers,
///   strings, dates, UUIDs, URLs, data;
/// - numbers by numeric value alone. While a descriptor's numbers are all integers, each is its
///   `Int64` with the sign bit flipped (a `UInt64` above `Int64.max` in a group of its own just
///   after, by its bits). From the descriptor's first `Float` or `Double` on, each number is a
///   `Double` (the integers held are converted then, which is exact only when each one is a
///   `Double` exactly), ordered by its bits (negative: all flipped, else the sign flipped), with
///   -0.0 as 0.0 and every NaN as the one word above +infinity: numerically equal numbers tie;
/// - dates by their time interval ordered as above but -0.0 before 0.0 (dates of different bits
///   never tie); a NaN date is the word above every other, its sign then its bits in the tail;
/// - strings (and URLs, by `absoluteString`) by the bytes of their NFC UTF-8 forms, data by its
///   bytes: the word holds the first 7 bytes and the length (8 for 8 or more), so a shorter one
///   needs no tail; a longer one keeps every byte as its tail;
/// - UUIDs by their bytes: the first 8 as the word, the last 8 as the tail.
///
/// **Fallback.** A descriptor whose values the keys cannot order — a `Decimal`, an array, a
/// Codable value, a reference to an object, a to-many list, a string of 4 GiB or more, or an
/// integer that is not exactly a `Double` among floating-point numbers — is compared with
/// ``PredicateEvaluator/compareKey(_:_:)`` over the values each slot keeps, from its first such
/// value on and for the rest of the fetch. The switch happens once per descriptor and fetch,
/// never per comparison; the other descriptors keep their keys.
///
/// With a capacity (a sort and a limit), the slots held are a max-heap (the last in order on
/// top), and one spare slot takes each new match before it is compared with the top: the match
/// is kept by swapping slot numbers, nothing moves, and a match that is not kept leaves no
/// bytes behind.
struct SortKeys {
    /// One value's key: see the type's documentation.
    struct Key {
        var group: UInt8 = 0
        var tailCount: UInt32 = 0
        var word: UInt64 = 0
        var tailStart: Int = 0
    }

    /// How one descriptor's keys are compared.
    struct Column {
        var reverse: Bool
        /// Compared by the values (``PredicateEvaluator/compareKey(_:_:)``), not the keys.
        var fallback = false
        /// Numbers are keyed as `Double`s (else as integers).
        var doubles = false
    }

    /// The key that breaks ties: a primary key's bytes big-endian, or (0, arrival).
    struct Tie {
        var high: UInt64
        var low: UInt64

        init(high: UInt64, low: UInt64) {
            self.high = high
            self.low = low
        }

        init(_ uuid: UUID) {
            (high, low) = withUnsafeBytes(of: uuid.uuid) { raw in
                (raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self).bigEndian, raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self).bigEndian)
            }
        }
    }

    // Group bytes, in the total order's order of groups (numbers have two).
    static let nullGroup: UInt8 = 0
    static let noTargetGroup: UInt8 = 2
    static let boolGroup: UInt8 = 4
    static let numberGroup: UInt8 = 6
    /// A `UInt64` above `Int64.max`, while a descriptor's numbers are keyed as integers.
    static let largeNumberGroup: UInt8 = 7
    static let stringGroup: UInt8 = 8
    static let dateGroup: UInt8 = 10
    static let uuidGroup: UInt8 = 12
    static let urlGroup: UInt8 = 14
    static let dataGroup: UInt8 = 16

    private static let signBit: UInt64 = 1 << 63

    /// Keys per slot: one per descriptor.
    let width: Int
    private var columns: [Column]
    /// Slot `s`'s key for descriptor `c` at `s * width + c`.
    private var keys: [Key] = []
    private var ties: [Tie] = []
    /// Each slot's sort values, as offered: what a descriptor that fell back compares.
    private var values: [[PropertyValue]] = []
    /// The tails of every key, one after another.
    private var tails: [UInt8] = []
    /// The buffer the tails are compacted into (with a capacity).
    private var spareTails: [UInt8] = []
    /// How many bytes of `tails` the slots held refer to (the rest belongs to keys replaced).
    private var liveTailBytes = 0
    /// With a sort and a limit: the most matches held.
    private let capacity: Int?
    /// With a capacity: the slots held, as a max-heap.
    private var heap: [Int] = []
    /// With a capacity, once full: the slot a new match is written to before it is compared.
    private var spare: Int?
    /// How many matches have been offered (the tie key of those offered without a primary key).
    private var arrivals: UInt64 = 0
    /// How many matches are held.
    private(set) var count = 0

    /// Keys for `descriptors`; with a `capacity`, only the first `capacity` matches in order
    /// are held.
    init(_ descriptors: [FetchSortDescriptor], capacity: Int?) {
        width = descriptors.count
        columns = descriptors.map { Column(reverse: $0.order == .reverse) }
        self.capacity = capacity
    }

    /// Takes a match whose sort values (one per descriptor) are `values`, its ties broken by
    /// `primaryKey`, or when that is `nil` by the order of arrival (every match of one window is
    /// offered one way or the other). Returns the slot that now holds it — the next new slot
    /// (the number of slots so far) or the slot of a match it displaced — or `nil` when it is
    /// not held.
    mutating func offer(_ values: [PropertyValue], primaryKey: UUID?) -> Int? {
        precondition(values.count == width, "one sort value per descriptor")
        let tie = primaryKey.map(Tie.init) ?? Tie(high: 0, low: arrivals)
        arrivals += 1
        guard let capacity else {
            let slot = ties.count
            liveTailBytes += write(slot, values, tie)
            count += 1
            return slot
        }
        guard capacity > 0 else { return nil }
        if count < capacity {
            let slot = ties.count
            liveTailBytes += write(slot, values, tie)
            count += 1
            heap.append(slot)
            siftUp(heap.count - 1)
            return slot
        }
        let slot = spare ?? ties.count
        let mark = tails.count
        let written = write(slot, values, tie)
        let top = heap[0]
        guard precedes(slot, top) else {
            tails.removeLast(tails.count - mark)
            spare = slot
            return nil
        }
        liveTailBytes += written - tailBytes(of: top)
        spare = top
        heap[0] = slot
        siftDown(0)
        if tails.count > 2 * liveTailBytes + 4096 { compactTails() }
        return slot
    }

    /// The slots held, in order.
    func ordered() -> [Int] {
        var order = held()
        withComparator { comparator in order.sort { comparator.compare($0, $1) < 0 } }
        return order
    }

    // MARK: Writing keys

    /// Writes a match's keys, tie and values to `slot` (a new slot when it is the number of
    /// slots so far); returns how many tail bytes its keys took.
    private mutating func write(_ slot: Int, _ values: [PropertyValue], _ tie: Tie) -> Int {
        let base = slot * width
        if slot == ties.count {
            ties.append(tie)
            self.values.append(values)
            var c = 0
            while c < width {
                keys.append(Key())
                c += 1
            }
        } else {
            ties[slot] = tie
            self.values[slot] = values
        }
        var written = 0
        var c = 0
        while c < width {
            let key = columns[c].fallback ? Key() : encode(values[c], column: c)
            keys[base + c] = key
            written += Int(key.tailCount)
            c += 1
        }
        return written
    }

    /// What a value comes to as a key, given how its descriptor keys numbers.
    private enum Encoded {
        case key(Key)
        /// A floating-point number, while numbers are keyed as integers.
        case needsDoubles
        /// A value the keys cannot order.
        case fallback
    }

    /// `value`'s key for descriptor `column`: converts the descriptor's numbers to `Double`s, or
    /// makes it fall back, when `value` needs that (an empty key then).
    private mutating func encode(_ value: PropertyValue, column c: Int) -> Key {
        while true {
            switch Self.encoded(value, doubles: columns[c].doubles, tails: &tails) {
            case .key(let key):
                return key
            case .needsDoubles:
                keyNumbersAsDoubles(c)
                if columns[c].fallback { return Key() }
            case .fallback:
                columns[c].fallback = true
                return Key()
            }
        }
    }

    private static func encoded(_ value: PropertyValue, doubles: Bool, tails: inout [UInt8]) -> Encoded {
        switch value {
        case .null: return .key(Key(group: nullGroup))
        case .toOne(nil): return .key(Key(group: noTargetGroup))
        case .bool(let v): return .key(Key(group: boolGroup, word: v ? 1 : 0))
        case .int(let v): return integer(Int64(v), doubles)
        case .int8(let v): return integer(Int64(v), doubles)
        case .int16(let v): return integer(Int64(v), doubles)
        case .int32(let v): return integer(Int64(v), doubles)
        case .int64(let v): return integer(v, doubles)
        case .uint(let v): return unsigned(UInt64(v), doubles)
        case .uint8(let v): return unsigned(UInt64(v), doubles)
        case .uint16(let v): return unsigned(UInt64(v), doubles)
        case .uint32(let v): return unsigned(UInt64(v), doubles)
        case .uint64(let v): return unsigned(v, doubles)
        case .float(let v): return doubles ? .key(number(Double(v))) : .needsDoubles
        case .double(let v): return doubles ? .key(number(v)) : .needsDoubles
        case .string(let v): return string(v, group: stringGroup, &tails)
        case .url(let v): return string(v.absoluteString, group: urlGroup, &tails)
        case .data(let v): return v.withUnsafeBytes { bytes($0, group: dataGroup, &tails) }
        case .date(let v): return .key(date(v.timeIntervalSinceReferenceDate, &tails))
        case .uuid(let v):
            let start = tails.count
            let bytes = Tie(v)
            withUnsafeBytes(of: bytes.low.bigEndian) { tails.append(contentsOf: $0) }
            return .key(Key(group: uuidGroup, tailCount: 8, word: bytes.high, tailStart: start))
        case .decimal, .array, .codable, .toOne, .toMany:
            return .fallback
        }
    }

    private static func integer(_ v: Int64, _ doubles: Bool) -> Encoded {
        guard doubles else { return .key(Key(group: numberGroup, word: UInt64(bitPattern: v) ^ signBit)) }
        guard let d = Double(exactly: v) else { return .fallback }
        return .key(number(d))
    }

    private static func unsigned(_ v: UInt64, _ doubles: Bool) -> Encoded {
        if v <= UInt64(Int64.max) { return integer(Int64(v), doubles) }
        guard doubles else { return .key(Key(group: largeNumberGroup, word: v)) }
        guard let d = Double(exactly: v) else { return .fallback }
        return .key(number(d))
    }

    /// A number's key among numbers keyed as `Double`s.
    static func number(_ v: Double) -> Key {
        Key(group: numberGroup, word: v.isNaN ? .max : orderedBits(v == 0 ? 0 : v))
    }

    /// A non-NaN double's bits, made to order as unsigned integers as the doubles do
    /// (-0.0 before 0.0).
    static func orderedBits(_ v: Double) -> UInt64 {
        let bits = v.bitPattern
        return bits & signBit != 0 ? ~bits : bits | signBit
    }

    private static func date(_ t: Double, _ tails: inout [UInt8]) -> Key {
        guard t.isNaN else { return Key(group: dateGroup, word: orderedBits(t)) }
        // NaNs after every date: negative ones first, each sign by bits.
        let start = tails.count
        tails.append(t.sign == .minus ? 0 : 1)
        withUnsafeBytes(of: t.bitPattern.bigEndian) { tails.append(contentsOf: $0) }
        return Key(group: dateGroup, tailCount: 9, word: .max, tailStart: start)
    }

    private static func string(_ s: String, group: UInt8, _ tails: inout [UInt8]) -> Encoded {
        var s = s
        let known = s.withUTF8 { utf8 -> Encoded? in
            let raw = UnsafeRawBufferPointer(utf8)
            return CanonicalStringOrder.isKnownNFC(raw) ? bytes(raw, group: group, &tails) : nil
        }
        if let known { return known }
        return CanonicalStringOrder.normalizedUTF8(s).withUnsafeBytes { bytes($0, group: group, &tails) }
    }

    /// The key of bytes ordered lexicographically: the first 7 in the word's high bytes, the
    /// length (at most 8) in its low byte; from 8 bytes on, every byte in the tail too.
    private static func bytes(_ raw: UnsafeRawBufferPointer, group: UInt8, _ tails: inout [UInt8]) -> Encoded {
        let n = raw.count
        guard n <= Int(UInt32.max) else { return .fallback }
        var word = UInt64(min(n, 8))
        var i = 0
        while i < min(n, 7) {
            word |= UInt64(raw[i]) << (56 - 8 * i)
            i += 1
        }
        if n <= 7 { return .key(Key(group: group, word: word)) }
        let start = tails.count
        tails.append(contentsOf: raw)
        return .key(Key(group: group, tailCount: UInt32(n), word: word, tailStart: start))
    }

    /// From the first floating-point number of descriptor `c` on: its numbers are keyed as
    /// `Double`s, the integers held converted, or it falls back when one is not a `Double`
    /// exactly.
    private mutating func keyNumbersAsDoubles(_ c: Int) {
        columns[c].doubles = true
        for slot in held() {
            let i = slot * width + c
            let key = keys[i]
            let exact: Double?
            switch key.group {
            case Self.numberGroup: exact = Double(exactly: Int64(bitPattern: key.word ^ Self.signBit))
            case Self.largeNumberGroup: exact = Double(exactly: key.word)
            default: continue
            }
            guard let exact else {
                columns[c].fallback = true
                return
            }
            keys[i] = Self.number(exact)
        }
    }

    /// The slots held.
    private func held() -> [Int] {
        if capacity != nil { return heap }
        // Counted up: `Array(0..<count)` allocates once per element in a debug build.
        var slots: [Int] = []
        slots.reserveCapacity(count)
        var slot = 0
        while slot < count {
            slots.append(slot)
            slot += 1
        }
        return slots
    }

    private func tailBytes(of slot: Int) -> Int {
        var total = 0
        var c = 0
        while c < width {
            total += Int(keys[slot * width + c].tailCount)
            c += 1
        }
        return total
    }

    /// Copies the tails the slots held refer to into the other buffer, dropping those of keys
    /// replaced; the two buffers keep their capacity, so compacting again allocates nothing.
    private mutating func compactTails() {
        var source: [UInt8] = []
        var target: [UInt8] = []
        swap(&source, &tails)
        swap(&target, &spareTails)
        target.removeAll(keepingCapacity: true)
        // Room for the bytes until the next compaction: in a steady state neither buffer grows.
        target.reserveCapacity(3 * liveTailBytes + 8192)
        var h = 0
        while h < heap.count {
            var i = heap[h] * width
            let end = i + width
            while i < end {
                let key = keys[i]
                if key.tailCount > 0 {
                    keys[i].tailStart = target.count
                    source.withUnsafeBytes { all in
                        target.append(contentsOf: UnsafeRawBufferPointer(rebasing: all[key.tailStart..<key.tailStart + Int(key.tailCount)]))
                    }
                }
                i += 1
            }
            h += 1
        }
        if let spare {
            // Its keys are rewritten before it is next compared.
            var i = spare * width
            while i < (spare + 1) * width {
                keys[i].tailCount = 0
                i += 1
            }
        }
        liveTailBytes = target.count
        tails = target
        spareTails = source
    }

    // MARK: Comparing

    /// Compares slots through pointers to the keys: no retain, release or allocation, but for a
    /// descriptor that fell back to its values.
    struct Comparator {
        let width: Int
        let columns: UnsafeBufferPointer<Column>
        let keys: UnsafeBufferPointer<Key>
        let ties: UnsafeBufferPointer<Tie>
        let tails: UnsafeRawBufferPointer
        let values: UnsafeBufferPointer<[PropertyValue]>

        /// -1, 0 or 1 as slot `a` comes before, with or after slot `b`.
        @inline(__always)
        func compare(_ a: Int, _ b: Int) -> Int {
            var i = a * width
            var j = b * width
            var c = 0
            while c < width {
                let column = columns[c]
                let order = column.fallback ? PredicateEvaluator.compareKey(values[a][c], values[b][c]) : compareKeys(keys[i], keys[j])
                if order != 0 { return column.reverse ? -order : order }
                i += 1
                j += 1
                c += 1
            }
            let x = ties[a]
            let y = ties[b]
            if x.high != y.high { return x.high < y.high ? -1 : 1 }
            return x.low == y.low ? 0 : (x.low < y.low ? -1 : 1)
        }

        @inline(__always)
        private func compareKeys(_ x: Key, _ y: Key) -> Int {
            if x.group != y.group { return x.group < y.group ? -1 : 1 }
            if x.word != y.word { return x.word < y.word ? -1 : 1 }
            if x.tailCount == 0 && y.tailCount == 0 { return 0 }
            return CanonicalStringOrder.orderedBytes(
                UnsafeRawBufferPointer(rebasing: tails[x.tailStart..<x.tailStart + Int(x.tailCount)]),
                UnsafeRawBufferPointer(rebasing: tails[y.tailStart..<y.tailStart + Int(y.tailCount)]))
        }
    }

    private func withComparator<R>(_ body: (Comparator) -> R) -> R {
        columns.withUnsafeBufferPointer { columns in
            keys.withUnsafeBufferPointer { keys in
                ties.withUnsafeBufferPointer { ties in
                    tails.withUnsafeBytes { tails in
                        values.withUnsafeBufferPointer { values in
                            body(Comparator(width: width, columns: columns, keys: keys, ties: ties, tails: tails, values: values))
                        }
                    }
                }
            }
        }
    }

    // MARK: The heap
    //
    // Written with plain subscripts: `swapAt` allocates in a debug build.

    /// Whether slot `a` comes before slot `b`.
    private func precedes(_ a: Int, _ b: Int) -> Bool { withComparator { $0.compare(a, b) < 0 } }

    private mutating func siftUp(_ start: Int) {
        var i = start
        while i > 0 {
            let parent = (i - 1) / 2
            guard precedes(heap[parent], heap[i]) else { return }
            (heap[parent], heap[i]) = (heap[i], heap[parent])
            i = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var i = start
        while true {
            var largest = i
            let left = 2 * i + 1
            let right = left + 1
            if left < heap.count && precedes(heap[largest], heap[left]) { largest = left }
            if right < heap.count && precedes(heap[largest], heap[right]) { largest = right }
            guard largest != i else { return }
            (heap[largest], heap[i]) = (heap[i], heap[largest])
            i = largest
        }
    }
}
