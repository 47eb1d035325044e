@testable import Engine
import Testing

/// The blob checksums against published values.
@Suite struct ChecksumTests {
    /// XXH64 with seed 0, from the xxHash reference implementation (the `xxhash` Python package
    /// binds it): the empty input, inputs shorter than one 32-byte stripe (tails of 8, 4 and 1
    /// bytes), and 1,031 bytes (32 stripes and every tail).
    @Test func xxHash64MatchesTheReferenceImplementation() {
        let cases: [([UInt8], UInt64)] = [
            ([], 0xEF46_DB37_51D8_E999),
            (Array("a".utf8), 0xD24E_C4F1_A98C_6E5B),
            (Array("abc".utf8), 0x44BC_2CF5_AD77_0999),
            (Array("Nobody inspects the spammish repetition".utf8), 0xFBCE_A83C_8A37_8BF1),
            (Array(repeating: Array(0...255), count: 4).flatMap { $0 } + Array(0..<7), 0xEBD3_5A59_60A6_9EBC),
        ]
        for (input, expected) in cases {
            #expect(XXHash64.hash(input[...]) == expected, "\(input.count) bytes")
        }
    }

    /// The content checksum is XXH64 of the chunks' hashes, little-endian, in order: chunk order
    /// matters, and no chunks hash like the empty input.
    @Test func contentDigestHashesTheChunkHashesInOrder() {
        var digest = ContentDigest()
        #expect(digest.value == 0xEF46_DB37_51D8_E999)
        digest.add(0x0102_0304_0506_0708)
        digest.add(0x1112_1314_1516_1718)
        let bytes: [UInt8] = [8, 7, 6, 5, 4, 3, 2, 1, 0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11]
        #expect(digest.value == XXHash64.hash(bytes[...]))
        var swapped = ContentDigest()
        swapped.add(0x1112_1314_1516_1718)
        swapped.add(0x0102_0304_0506_0708)
        #expect(swapped.value != digest.value)
    }
}
