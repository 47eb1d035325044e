/// A ``Location`` as the index stores it: 32 bytes instead of 40. The file id (64 bits, a pack's
/// with its high bit set) becomes a 24-bit slot in the index's ``FileSlots`` and shares a word
/// with the block offset (40 bits: 1 TiB, where a segment or pack is a few GiB at most).
///
/// Nothing is truncated: a location whose block offset or slot does not fit (or when all 2^24 − 1
/// slots are taken) is kept whole in the slots' overflow list, and the packed form holds the
/// ``overflowSlot`` marker and its place in that list.
struct PackedLocation: Sendable, Equatable {
    var sequence: UInt64
    /// `blockOffset << 24 | slot`, or `overflow index << 24 | overflowSlot`.
    var offsetAndSlot: UInt64
    var blockLength: UInt32
    var valueOffset: UInt32
    var valueLength: UInt32
    var recordSize: UInt32

    static let slotBits: UInt64 = 24
    static let overflowSlot: UInt32 = (1 << 24) - 1
    static let maxBlockOffset: UInt64 = (1 << 40) - 1

    var slot: UInt32 { UInt32(truncatingIfNeeded: offsetAndSlot & UInt64(Self.overflowSlot)) }
    var isOverflow: Bool { slot == Self.overflowSlot }
    var isBlob: Bool { valueLength == Location.blobMarker }
    var isTombstone: Bool { valueLength == Location.tombstoneMarker }
}

/// The file ids the index's locations refer to, each under a small slot number, with the count of
/// locations that use it: a slot is freed (and reused) when its last location goes. Also the
/// overflow list of locations that do not pack (see ``PackedLocation``).
struct FileSlots: Sendable {
    private var files: [UInt64] = []
    private var users: [Int] = []
    private var slotOfFile: [UInt64: UInt32] = [:]
    private var freeSlots: [UInt32] = []
    private var overflow: [Location] = []
    private var freeOverflow: [UInt64] = []
    /// The last file packed and its slot: the records of a commit or a pack share one file.
    private var lastFile: UInt64 = 0
    private var lastSlot: UInt32 = PackedLocation.overflowSlot

    /// Slots in use, for tests and estimates.
    var slotsInUse: Int { slotOfFile.count }
    var overflowCount: Int { overflow.count - freeOverflow.count }

    /// The packed form of `location`, which now counts as one use of its file (until ``release(_:)``).
    mutating func retain(_ location: Location) -> PackedLocation {
        var slot: UInt32
        if lastSlot != PackedLocation.overflowSlot, lastFile == location.segment {
            slot = lastSlot
        } else if let known = slotOfFile[location.segment] {
            slot = known
        } else if let reused = freeSlots.popLast() {
            slot = reused
            files[Int(slot)] = location.segment
            slotOfFile[location.segment] = slot
        } else if files.count < Int(PackedLocation.overflowSlot) {
            slot = UInt32(files.count)
            files.append(location.segment)
            users.append(0)
            slotOfFile[location.segment] = slot
        } else {
            slot = PackedLocation.overflowSlot
        }
        if slot != PackedLocation.overflowSlot, location.blockOffset <= PackedLocation.maxBlockOffset {
            users[Int(slot)] += 1
            lastFile = location.segment
            lastSlot = slot
            return PackedLocation(
                sequence: location.sequence, offsetAndSlot: location.blockOffset << PackedLocation.slotBits | UInt64(slot),
                blockLength: location.blockLength, valueOffset: location.valueOffset,
                valueLength: location.valueLength, recordSize: location.recordSize)
        }
        if slot != PackedLocation.overflowSlot, users[Int(slot)] == 0 { free(slot) }
        let index: UInt64
        if let reused = freeOverflow.popLast() {
            index = reused
            overflow[Int(index)] = location
        } else {
            index = UInt64(overflow.count)
            overflow.append(location)
        }
        return PackedLocation(
            sequence: location.sequence, offsetAndSlot: index << PackedLocation.slotBits | UInt64(PackedLocation.overflowSlot),
            blockLength: location.blockLength, valueOffset: location.valueOffset,
            valueLength: location.valueLength, recordSize: location.recordSize)
    }

    /// Ends the use of a packed location's file (or its overflow entry).
    mutating func release(_ packed: PackedLocation) {
        if packed.isOverflow {
            freeOverflow.append(packed.offsetAndSlot >> PackedLocation.slotBits)
            if freeOverflow.count == overflow.count {
                overflow.removeAll()
                freeOverflow.removeAll()
            }
            return
        }
        let slot = Int(packed.slot)
        users[slot] -= 1
        if users[slot] == 0 { free(packed.slot) }
    }

    private mutating func free(_ slot: UInt32) {
        slotOfFile[files[Int(slot)]] = nil
        freeSlots.append(slot)
        if lastSlot == slot { lastSlot = PackedLocation.overflowSlot }
    }

    /// The location `packed` stands for.
    @inline(__always)
    func location(_ packed: PackedLocation) -> Location {
        if packed.isOverflow { return overflow[Int(packed.offsetAndSlot >> PackedLocation.slotBits)] }
        return Location(
            segment: files[Int(packed.slot)], blockOffset: packed.offsetAndSlot >> PackedLocation.slotBits,
            blockLength: packed.blockLength, valueOffset: packed.valueOffset, valueLength: packed.valueLength,
            recordSize: packed.recordSize, sequence: packed.sequence)
    }

    /// The file of `packed`, without building the whole location.
    @inline(__always)
    func file(_ packed: PackedLocation) -> UInt64 {
        packed.isOverflow ? overflow[Int(packed.offsetAndSlot >> PackedLocation.slotBits)].segment : files[Int(packed.slot)]
    }
}
