import Engine
import Foundation

extension UUID {
    /// A random (version 4, RFC 9562) UUID: 122 random bits from a shared
    /// ``BufferedRandomNumberGenerator`` (one refill from the system per 256 UUIDs), without
    /// the file open and close that Foundation's `UUID()` costs on Linux for each one. New
    /// objects' primary keys are time-ordered instead (``makeTimeOrdered()``).
    @usableFromInline package static func makeRandom() -> UUID {
        let (a, b) = randomWords.withLock { ($0.next(), $0.next()) }
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &raw) { bytes in
            bytes.storeBytes(of: a, toByteOffset: 0, as: UInt64.self)
            bytes.storeBytes(of: b, toByteOffset: 8, as: UInt64.self)
            bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
            bytes[8] = bytes[8] & 0x3F | 0x80  // the RFC's variant
        }
        return UUID(uuid: raw)
    }
}

/// The random words of ``UUID/makeRandom()``, read and refilled only inside `withLock` (which
/// takes no other lock).
private let randomWords = Locked(BufferedRandomNumberGenerator())
