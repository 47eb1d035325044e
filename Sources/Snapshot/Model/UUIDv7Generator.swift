#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import Engine
import Foundation

/// Time-ordered UUIDs (version 7, RFC 9562 section 5.7): the primary keys a ``WALDataStore``
/// gives the objects it inserts, so that objects made together sit together in the key space.
///
/// Layout, most significant bits first (FORMAT.md section 18, "Keys"):
/// - 48 bits: Unix time in milliseconds, big-endian;
/// - 4 bits: the version, 7;
/// - 12 bits: a counter (RFC 9562 section 6.2, method 1, "fixed-length dedicated counter bits");
/// - 2 bits: the variant, `10`;
/// - 62 bits: random, new for each UUID.
///
/// Monotonic within a generator (the process's is ``shared``): each UUID is greater than the
/// one before it, byte-wise, which is the order of ``PersistentIdentifier/PrimaryKey``. At a
/// millisecond later than the last UUID's, the counter starts at a random value below 2048
/// (11 random bits), so at least 2048 UUIDs fit in a millisecond; within the same millisecond
/// it is incremented; when it would pass 4095 the timestamp moves on one millisecond ahead of
/// the clock, and the counter starts again. A clock that steps back (or stands still) is not
/// followed below the last timestamp: the generator keeps counting on the last one until the
/// clock passes it.
///
/// Uniqueness across processes rests on the 62 random bits (and the counter's random start):
/// two generators collide only if they make a UUID in the same millisecond with the same counter
/// and the same 62 random bits. The random bits come from a ``BufferedRandomNumberGenerator``.
///
/// Thread-safe: the timestamp, counter and random buffer sit in one `Locked` and are read and
/// written only inside its `withLock`, which makes one UUID and takes no other lock. The clock is
/// read before the lock is taken (a later caller may then hold an earlier reading; the state, not
/// the reading, keeps the order).
package final class UUIDv7Generator: Sendable {
    /// The generator of this process.
    package static let shared = UUIDv7Generator(clock: { UUIDv7Generator.systemMilliseconds() })

    /// The last UUID's timestamp and counter, and the random words.
    struct State {
        var milliseconds: UInt64 = 0
        var counter: UInt16 = 0
        var random = BufferedRandomNumberGenerator()
    }

    /// The largest counter (12 bits).
    static let counterLimit: UInt16 = 0xFFF

    private let clock: @Sendable () -> UInt64
    private let state = Locked(State())

    /// A generator reading `clock` (Unix milliseconds) for its timestamps.
    init(clock: @escaping @Sendable () -> UInt64) {
        self.clock = clock
    }

    /// The next UUID: greater than every UUID this generator made before.
    package func next() -> UUID {
        let now = clock() & 0xFFFF_FFFF_FFFF
        return state.withLock { state in
            if now > state.milliseconds {
                state.milliseconds = now
                state.counter = UInt16(truncatingIfNeeded: state.random.next()) & 0x7FF
            } else if state.counter < Self.counterLimit {
                state.counter += 1
            } else {
                state.milliseconds += 1
                state.counter = UInt16(truncatingIfNeeded: state.random.next()) & 0x7FF
            }
            return Self.uuid(milliseconds: state.milliseconds, counter: state.counter, random: state.random.next())
        }
    }

    /// The UUID of a timestamp, a 12-bit counter and 62 of the 64 bits of `random`.
    static func uuid(milliseconds: UInt64, counter: UInt16, random: UInt64) -> UUID {
        let high = milliseconds << 16 | 0x7000 | UInt64(counter & counterLimit)
        let low = random & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &raw) { bytes in
            bytes.storeBytes(of: high.bigEndian, toByteOffset: 0, as: UInt64.self)
            bytes.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        return UUID(uuid: raw)
    }

    /// The system's real-time clock in Unix milliseconds (0 before 1970).
    package static func systemMilliseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        guard time.tv_sec >= 0 else { return 0 }
        return UInt64(time.tv_sec) * 1000 + UInt64(time.tv_nsec) / 1_000_000
    }
}

extension UUID {
    /// A new time-ordered (version 7) UUID from ``UUIDv7Generator/shared``: the primary key of a
    /// new object.
    package static func makeTimeOrdered() -> UUID {
        UUIDv7Generator.shared.next()
    }
}
