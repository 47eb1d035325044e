/// XXH3, 64-bit output, seed 0 and the default secret (Yann Collet's xxHash, as specified in the
/// xxHash repository's `doc/xxhash_spec.md` and its reference `xxhash.h`): the checksum of blob
/// chunks from blob file version 4 (FORMAT.md, "Blob files").
///
/// A blob is verified whenever it is read, so its checksum bounds a read from the page cache.
/// XXH3 keeps eight 64-bit accumulators over 64-byte stripes and multiplies 32-bit halves, which
/// the compiler turns into vector instructions on the baseline x86-64 and arm64 targets: about
/// twice XXH64's speed in plain Swift. Like XXH64 it detects damage, not tampering.
enum XXH3 {
    /// XXH3-64 of `bytes`.
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        secret.withUnsafeBytes { hash(bytes, secret: $0) }
    }

    /// XXH3-64 of `bytes`.
    static func hash(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.withUnsafeBytes { hash($0) }
    }

    /// The default secret (`XXH3_kSecret`), 192 bytes.
    private static let secret: [UInt8] = [
        0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
        0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
        0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
        0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
        0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
        0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
        0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
        0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
        0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
        0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
        0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
        0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
    ]

    private static let prime32_1: UInt64 = 0x9E37_79B1
    private static let prime32_2: UInt64 = 0x85EB_CA77
    private static let prime32_3: UInt64 = 0xC2B2_AE3D
    private static let prime64_1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime64_2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime64_3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime64_4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let prime64_5: UInt64 = 0x27D4_EB2F_1656_67C5
    private static let primeMX1: UInt64 = 0x1656_6791_9E37_79F9
    private static let primeMX2: UInt64 = 0x9FB2_1C65_1E98_DF25

    /// Eight accumulator lanes, or eight input words of a 64-byte stripe.
    private typealias Lanes = SIMD8<UInt64>
    /// Input bytes per stripe, and the secret's size.
    private static let stripeLength = 64
    private static let secretSize = 192
    /// Stripes per block: a block's stripes take the secret 8 bytes further each.
    private static let stripesPerBlock = (secretSize - stripeLength) / 8

    /// The hash by the input's length: 0–16, 17–128 and 129–240 bytes each have their own mix;
    /// longer inputs go through the accumulator lanes.
    private static func hash(_ input: UnsafeRawBufferPointer, secret: UnsafeRawBufferPointer) -> UInt64 {
        let length = input.count
        let length64 = UInt64(length)
        switch length {
        case 0:
            return avalanche64(word(secret, 56) ^ word(secret, 64))
        case 1...3:
            let combined =
                (UInt64(input[0]) << 16) | (UInt64(input[length >> 1]) << 24) | UInt64(input[length - 1])
                | (length64 << 8)
            return avalanche64(combined ^ (half(secret, 0) ^ half(secret, 4)))
        case 4...8:
            let keyed = (half(input, length - 4) &+ (half(input, 0) << 32)) ^ (word(secret, 8) ^ word(secret, 16))
            return rrmxmx(keyed, length: length64)
        case 9...16:
            let low = word(input, 0) ^ (word(secret, 24) ^ word(secret, 32))
            let high = word(input, length - 8) ^ (word(secret, 40) ^ word(secret, 48))
            return avalanche(length64 &+ low.byteSwapped &+ high &+ fold(low, high))
        case 17...128:
            var accumulator = length64 &* prime64_1
            if length > 32 {
                if length > 64 {
                    if length > 96 {
                        accumulator &+= mix16(input, 48, secret, 96)
                        accumulator &+= mix16(input, length - 64, secret, 112)
                    }
                    accumulator &+= mix16(input, 32, secret, 64)
                    accumulator &+= mix16(input, length - 48, secret, 80)
                }
                accumulator &+= mix16(input, 16, secret, 32)
                accumulator &+= mix16(input, length - 32, secret, 48)
            }
            accumulator &+= mix16(input, 0, secret, 0)
            accumulator &+= mix16(input, length - 16, secret, 16)
            return avalanche(accumulator)
        case 129...240:
            var accumulator = length64 &* prime64_1
            for round in 0..<8 { accumulator &+= mix16(input, 16 * round, secret, 16 * round) }
            accumulator = avalanche(accumulator)
            // The last 16 bytes, then rounds 8... with the secret from offset 3.
            var end = mix16(input, length - 16, secret, 136 - 17)
            var round = 8
            while round < length / 16 {
                end &+= mix16(input, 16 * round, secret, 16 * (round - 8) + 3)
                round += 1
            }
            return avalanche(accumulator &+ end)
        default:
            return long(input, secret: secret)
        }
    }

    /// Inputs over 240 bytes: 1,024-byte blocks of 16 stripes, the lanes scrambled after each;
    /// then the last block's whole stripes and the input's last 64 bytes; the lanes merged.
    private static func long(_ input: UnsafeRawBufferPointer, secret: UnsafeRawBufferPointer) -> UInt64 {
        let length = input.count
        var lanes = Lanes(prime32_3, prime64_1, prime64_2, prime64_3, prime64_4, prime32_2, prime64_5, prime32_1)
        let blockLength = stripeLength * stripesPerBlock
        let blocks = (length - 1) / blockLength
        let scrambleKey = loadLanes(secret, secretSize - stripeLength)
        let multiplier = Lanes(repeating: prime32_1)
        for block in 0..<blocks {
            let start = block * blockLength
            for stripe in 0..<stripesPerBlock {
                accumulate(&lanes, input, start + stripe * stripeLength, secret, stripe * 8)
            }
            lanes ^= lanes &>> 47
            lanes ^= scrambleKey
            lanes &*= multiplier
        }
        let stripes = (length - 1 - blocks * blockLength) / stripeLength
        for stripe in 0..<stripes {
            accumulate(&lanes, input, blocks * blockLength + stripe * stripeLength, secret, stripe * 8)
        }
        accumulate(&lanes, input, length - stripeLength, secret, secretSize - stripeLength - 7)
        var result = UInt64(length) &* prime64_1
        for pair in 0..<4 {
            result &+= fold(lanes[2 * pair] ^ word(secret, 11 + 16 * pair), lanes[2 * pair + 1] ^ word(secret, 19 + 16 * pair))
        }
        return avalanche(result)
    }

    /// One stripe into the lanes: each lane adds its neighbour's input word and the product of
    /// the two 32-bit halves of its own word keyed by the secret.
    @inline(__always)
    private static func accumulate(
        _ lanes: inout Lanes, _ input: UnsafeRawBufferPointer, _ offset: Int, _ secret: UnsafeRawBufferPointer,
        _ secretOffset: Int
    ) {
        let data = loadLanes(input, offset)
        let keyed = data ^ loadLanes(secret, secretOffset)
        let swapped = Lanes(data[1], data[0], data[3], data[2], data[5], data[4], data[7], data[6])
        lanes &+= swapped &+ (keyed & 0xFFFF_FFFF) &* (keyed &>> 32)
    }

    /// The eight little-endian words at `offset`.
    @inline(__always)
    private static func loadLanes(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> Lanes {
        #if _endian(little)
            bytes.loadUnaligned(fromByteOffset: offset, as: Lanes.self)
        #else
            Lanes((0..<8).map { word(bytes, offset + 8 * $0) })
        #endif
    }

    @inline(__always)
    private static func word(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inline(__always)
    private static func half(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
    }

    /// The 128-bit product of `a` and `b`, its halves xored.
    @inline(__always)
    private static func fold(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.high ^ product.low
    }

    @inline(__always)
    private static func mix16(
        _ input: UnsafeRawBufferPointer, _ offset: Int, _ secret: UnsafeRawBufferPointer, _ secretOffset: Int
    ) -> UInt64 {
        fold(word(input, offset) ^ word(secret, secretOffset), word(input, offset + 8) ^ word(secret, secretOffset + 8))
    }

    @inline(__always)
    private static func avalanche(_ value: UInt64) -> UInt64 {
        let h = (value ^ (value >> 37)) &* primeMX1
        return h ^ (h >> 32)
    }

    /// XXH64's avalanche, which XXH3 uses for inputs of 0 to 3 bytes.
    @inline(__always)
    private static func avalanche64(_ value: UInt64) -> UInt64 {
        var h = value
        h ^= h >> 33
        h &*= prime64_2
        h ^= h >> 29
        h &*= prime64_3
        return h ^ (h >> 32)
    }

    @inline(__always)
    private static func rrmxmx(_ value: UInt64, length: UInt64) -> UInt64 {
        var h = value
        h ^= ((h &<< 49) | (h &>> 15)) ^ ((h &<< 24) | (h &>> 40))
        h &*= primeMX2
        h ^= (h >> 35) &+ length
        h &*= primeMX2
        return h ^ (h >> 28)
    }
}
