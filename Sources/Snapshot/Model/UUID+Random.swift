import Foundation

extension UUID {
    /// A random (version 4, RFC 9562) UUID from the system's random number generator, without
    /// the file open and close that Foundation's `UUID()` costs on Linux for each one.
    @usableFromInline package static func makeRandom() -> UUID {
        var generator = SystemRandomNumberGenerator()
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &raw) { bytes in
            bytes.storeBytes(of: generator.next() as UInt64, toByteOffset: 0, as: UInt64.self)
            bytes.storeBytes(of: generator.next() as UInt64, toByteOffset: 8, as: UInt64.self)
            bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
            bytes[8] = bytes[8] & 0x3F | 0x80  // the RFC's variant
        }
        return UUID(uuid: raw)
    }
}
