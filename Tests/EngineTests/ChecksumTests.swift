@testable import Engine
import EngineTestSupport
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

    /// The content checksum is XXH64 of the chunks' hashes, little-endian, in order, computed as
    /// they arrive: equal to the one-shot hash of their bytes for every count (below, at and past
    /// a 32-byte stripe, with every tail), and chunk order matters.
    @Test func contentDigestIsXXHash64OfTheChunkHashesInOrder() {
        var random = SeededGenerator(seed: 64)
        for count in 0...21 {
            let hashes = (0..<count).map { _ in UInt64.random(in: 0...UInt64.max, using: &random) }
            var digest = ContentDigest()
            var bytes: [UInt8] = []
            for hash in hashes {
                digest.add(hash)
                withUnsafeBytes(of: hash.littleEndian) { bytes.append(contentsOf: $0) }
            }
            #expect(digest.value == XXHash64.hash(bytes[...]), "\(count) chunks")
        }
        #expect(ContentDigest().value == 0xEF46_DB37_51D8_E999, "no chunks: the empty input's hash")
        var forward = ContentDigest()
        forward.add(1)
        forward.add(2)
        var backward = ContentDigest()
        backward.add(2)
        backward.add(1)
        #expect(forward.value != backward.value)
    }
}
