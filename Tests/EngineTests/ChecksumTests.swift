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

    /// XXH3-64 with seed 0 and the default secret, against `xxhsum -H3` (xxHash 0.8.1): inputs of
    /// byte *i* = 31·*i* + 7 (mod 256) at every length where the algorithm changes path (0, 1–3,
    /// 4–8, 9–16, 17–128 in its four steps, 129–240, then the long path's stripe and block
    /// boundaries), up to one blob chunk.
    @Test func xxh3MatchesTheReferenceImplementation() {
        let cases: [(Int, UInt64)] = [
            (0, 0x2D06_8005_38D3_94C2),
            (1, 0x4C5C_CA45_D0F4_811F),
            (2, 0xA7E2_50C9_7710_FF27),
            (3, 0x15F7_093B_173D_005C),
            (4, 0xDCA0_12F9_5811_B6B9),
            (5, 0xB290_CAFC_7B25_4345),
            (8, 0xDEC6_A9A4_3575_982E),
            (9, 0xCBE3_9339_9F17_FFBD),
            (15, 0x545E_1999_0471_DC37),
            (16, 0x7E48_4C18_D748_95D0),
            (17, 0x208B_DE5E_E2BE_D407),
            (31, 0xA937_652B_0119_CA11),
            (32, 0x03DF_0AC5_255D_1446),
            (33, 0x199A_3621_22D7_1F46),
            (64, 0xDD30_702A_B46B_3745),
            (65, 0xFAB3_6B85_1B94_CE20),
            (96, 0xD245_CD25_4158_2982),
            (97, 0x60E3_E1D0_D437_85B3),
            (127, 0xA915_ED63_96DB_8CC0),
            (128, 0xF92B_70EA_A21A_6288),
            (129, 0xF8F7_6713_F2BB_60FA),
            (200, 0x12FD_B864_685F_344D),
            (239, 0xCAA9_B7A5_8846_4745),
            (240, 0xCCC7_3751_72C4_1F03),
            (241, 0x0B3B_6309_48CE_4A00),
            (255, 0x8993_2170_686C_DD9A),
            (256, 0xEC85_B75B_AFE6_CA74),
            (1023, 0xF0D3_30CE_2B33_00FB),
            (1024, 0x23BC_880E_BF0D_29C6),
            (1025, 0xC09F_DFBC_398C_7D82),
            (2048, 0x19F6_F9C9_8733_1373),
            (4096, 0xA3C1_9F81_74CD_E0BB),
            (10000, 0x441F_01D9_711B_EBED),
            (65536, 0xCF18_8822_0487_98B0),
            (1048576, 0x269E_B834_F6C1_10A9),
        ]
        for (count, expected) in cases {
            let input = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            #expect(XXH3.hash(input[...]) == expected, "\(count) bytes")
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
