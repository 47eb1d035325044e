import Engine
import Foundation
import Snapshot
import Testing

/// A clock a test sets by hand: frozen until it is set again.
final class TestClock: Sendable {
    private let milliseconds: Locked<UInt64>
    init(_ milliseconds: UInt64) { self.milliseconds = Locked(milliseconds) }
    func read() -> UInt64 { milliseconds.withLock { $0 } }
    func set(_ value: UInt64) { milliseconds.withLock { $0 = value } }
}

extension UUID {
    var bytes: [UInt8] { withUnsafeBytes(of: uuid) { Array($0) } }
    /// The 48-bit timestamp of a version-7 UUID.
    var unixMilliseconds: UInt64 { bytes[0..<6].reduce(0) { $0 << 8 | UInt64($1) } }
    var version: UInt8 { bytes[6] >> 4 }
    /// The two variant bits (`0b10` for RFC 9562's).
    var variant: UInt8 { bytes[8] >> 6 }
    /// The 12-bit counter of a version-7 UUID made by ``UUIDv7Generator``.
    var counter: Int { Int(bytes[6] & 0x0F) << 8 | Int(bytes[7]) }
    /// Byte-wise order: the order of primary keys and of the store's keys.
    func isBefore(_ other: UUID) -> Bool { bytes.lexicographicallyPrecedes(other.bytes) }
}

/// The time-ordered primary keys of new objects (``UUIDv7Generator``) and the buffered random
/// words under them and under ``UUID/makeRandom()``.
@Suite struct UUIDv7GeneratorTests {
    /// 2023-11-14T22:13:20Z.
    static let start: UInt64 = 1_700_000_000_000

    static func nowMilliseconds() -> UInt64 { UInt64(Date().timeIntervalSince1970 * 1000) }

    /// Every key after the first is greater than the one before it.
    static func strictlyIncreasing(_ keys: [UUID]) -> Bool {
        zip(keys, keys.dropFirst()).allSatisfy { $0.isBefore($1) }
    }

    @Test func newKeysCarryVersion7AndTheRFCVariant() {
        let clock = TestClock(Self.start)
        let generator = UUIDv7Generator(milliseconds: clock.read)
        let keys = (0..<1_000).map { _ in UUID.makeTimeOrdered() } + (0..<10_000).map { _ in generator.next() }
        #expect(keys.allSatisfy { $0.version == 7 && $0.variant == 0b10 })
    }

    @Test func randomKeysStayVersion4() {
        let keys = (0..<2_000).map { _ in UUID.makeRandom() }
        #expect(keys.allSatisfy { $0.version == 4 && $0.variant == 0b10 })
        #expect(Set(keys).count == keys.count)
    }

    @Test func keysFromOneThreadStrictlyIncrease() {
        let generator = UUIDv7Generator(milliseconds: UUIDv7Generator.systemMilliseconds)
        let keys = (0..<100_000).map { _ in generator.next() }
        #expect(Self.strictlyIncreasing(keys))
        #expect(
            zip(keys, keys.dropFirst()).allSatisfy { PersistentIdentifier.PrimaryKey.uuid($0) < .uuid($1) },
            "primary keys order as the bytes do")
        let shared = (0..<100_000).map { _ in UUID.makeTimeOrdered() }
        #expect(Self.strictlyIncreasing(shared))
    }

    @Test func keysFromConcurrentTasksAreUniqueAndIncreaseWithinEachTask() async {
        let tasks = 8, perTask = 20_000
        let sequences = await withTaskGroup(of: [UUID].self) { group in
            for _ in 0..<tasks {
                group.addTask { (0..<perTask).map { _ in UUID.makeTimeOrdered() } }
            }
            return await group.reduce(into: [[UUID]]()) { $0.append($1) }
        }
        #expect(sequences.count == tasks)
        for sequence in sequences { #expect(Self.strictlyIncreasing(sequence)) }
        #expect(Set(sequences.joined()).count == tasks * perTask, "no key is made twice")
    }

    @Test func aFrozenClockStillGivesIncreasingKeys() {
        let clock = TestClock(Self.start)
        let generator = UUIDv7Generator(milliseconds: clock.read)
        let keys = (0..<10_000).map { _ in generator.next() }
        #expect(Self.strictlyIncreasing(keys))
        #expect(keys[0].unixMilliseconds == Self.start)
        #expect(keys.allSatisfy { $0.unixMilliseconds >= Self.start })
        // At least 2048 keys fit in a millisecond (the counter starts below 2048 and counts to
        // 4095); past them the timestamp moves on, one millisecond at a time.
        let last = keys.last!.unixMilliseconds
        #expect(last > Self.start, "10,000 keys overflow the counter of one millisecond")
        #expect(last <= Self.start + 4, "no more than one millisecond per 2048 keys")
        #expect(zip(keys, keys.dropFirst()).allSatisfy { $1.unixMilliseconds <= $0.unixMilliseconds + 1 })
    }

    @Test func aClockSteppedBackNeverTakesTheTimestampBelowTheLast() {
        let clock = TestClock(Self.start)
        let generator = UUIDv7Generator(milliseconds: clock.read)
        var keys = (0..<100).map { _ in generator.next() }
        clock.set(Self.start + 10)
        keys += (0..<100).map { _ in generator.next() }
        let high = keys.last!.unixMilliseconds
        #expect(high == Self.start + 10)
        clock.set(Self.start - 60_000)  // a minute back
        let afterStep = (0..<5_000).map { _ in generator.next() }
        #expect(afterStep.allSatisfy { $0.unixMilliseconds >= high }, "not below the last timestamp")
        keys += afterStep
        clock.set(Self.start + 20)  // past the last timestamp again: followed
        let caughtUp = generator.next()
        #expect(caughtUp.unixMilliseconds == max(Self.start + 20, afterStep.last!.unixMilliseconds))
        keys.append(caughtUp)
        #expect(Self.strictlyIncreasing(keys))
    }

    @Test func theTimestampIsTheMillisecondTheKeyWasMadeIn() {
        let generator = UUIDv7Generator(milliseconds: UUIDv7Generator.systemMilliseconds)
        var outside: [(UInt64, UInt64, UInt64)] = []
        for _ in 0..<1_000 {
            // The generator's own clock source: `Date`'s seconds since 1970, a `Double` scaled by
            // 1,000, can round up into the next millisecond.
            let before = UUIDv7Generator.systemMilliseconds()
            let key = generator.next()
            let after = UUIDv7Generator.systemMilliseconds()
            if !(before...after ~= key.unixMilliseconds) { outside.append((before, key.unixMilliseconds, after)) }
        }
        #expect(outside.isEmpty, "before, timestamp, after: \(outside.prefix(3))")
    }

    @Test func theCounterStartsBelow2048AtEachNewMillisecond() {
        let clock = TestClock(Self.start)
        let generator = UUIDv7Generator(milliseconds: clock.read)
        var starts = Set<Int>()
        for step in 0..<200 {
            clock.set(Self.start + UInt64(step))
            let first = generator.next(), second = generator.next()
            #expect(first.counter < 2048 && second.counter == first.counter + 1)
            starts.insert(first.counter)
        }
        #expect(starts.count > 100, "the counter's start is random")
    }

    @Test func generatorsSharingAMillisecondDifferByTheirRandomBits() {
        let clock = TestClock(Self.start)
        let a = UUIDv7Generator(milliseconds: clock.read), b = UUIDv7Generator(milliseconds: clock.read)
        var keys = Set<UUID>()
        for _ in 0..<1_000 {
            keys.insert(a.next())
            keys.insert(b.next())
        }
        #expect(keys.count == 2_000)
        // The 62 bits after the variant are random: each of them is set in some key and clear in another.
        let tails = keys.map { $0.bytes[8...].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } & 0x3FFF_FFFF_FFFF_FFFF }
        #expect(tails.reduce(0, |) == 0x3FFF_FFFF_FFFF_FFFF && tails.reduce(~0, &) == 0)
    }

    @Test func theBufferedGeneratorRefillsWithNewWords() {
        var generator = BufferedRandomNumberGenerator()
        let words = (0..<(BufferedRandomNumberGenerator.capacity * 4 + 3)).map { _ in generator.next() }
        #expect(Set(words).count == words.count, "no word repeats, across refills too")
        #expect(words.reduce(0, |) == ~0 && words.reduce(~0, &) == 0)
    }
}
