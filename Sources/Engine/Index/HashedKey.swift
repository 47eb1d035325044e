/// A key as a dictionary key. `[UInt8]`'s own `Hashable` feeds the hasher one byte at a time;
/// this feeds it the whole buffer at once, which made hashing several times cheaper on the
/// commit and open paths.
struct HashedKey: Hashable, Sendable {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    static func == (a: HashedKey, b: HashedKey) -> Bool { a.bytes == b.bytes }
}
