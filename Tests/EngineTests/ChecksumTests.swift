@testable import Engine
import EngineTestSupport
import Testing

/// The blob checksums against published values.
@Suite struct ChecksumTests {
    /// XXH64 with seed 0, from the xxHash reference implementation (the `xxhash` Python package
    /// binds it): the empty input, inputs shorter than one 32-byte stripe, 1,031 bytes (32
    /// stripes, then 4- and 1-byte tails), and inputs whose tails hold 8-byte words.
    @Test func xxHash64MatchesTheReferenceImplementation() {
        let cases: [([UInt8], UInt64)] = [
            ([], 0xEF46_DB37_51D8_E999),
            (Array("a".utf8), 0xD24E_C4F1_A98C_6E5B),
            (Array("abc".utf8), 0x44BC_2CF5_AD77_0999),
            (Array("Nobody inspects the spammish repetition".utf8), 0xFBCE_A83C_8A37_8BF1),
            (Array(repeating: Array(0...255), count: 4).flatMap { $0 } + Array(0..<7), 0xEBD3_5A59_60A6_9EBC),
            // Tails with 8-byte words: 8 + 4 with no stripe, 16 after one, 24 + 4 + 3 after one.
            (Array(0..<12), 0x424A_F23F_1F08_DCA5),
            (Array(0..<48), 0x8FE4_3763_2DA0_6964),
            (Array(0..<63), 0xE26A_A9E2_A95F_8E4F),
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
