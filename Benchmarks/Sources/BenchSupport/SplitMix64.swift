/// SplitMix64 (Steele, Lea and Flood, 2014): the seeded generator behind every byte and every
/// order the benches use, so that two runs (and two contenders) see exactly the same data.
///
/// Bounded numbers and shuffles are computed here rather than with the standard library's
/// `random(in:using:)` and `shuffle(using:)`, whose algorithms are not promised to stay the same
/// across Swift releases.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose whole output is fixed by `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0 ..< bound` (Lemire's multiply-high; the tiny bias is irrelevant here).
    public mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0, "the bound must be positive")
        return Int(next().multipliedFullWidth(by: UInt64(bound)).high)
    }

    /// A number in `range`.
    public mutating func inRange(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + below(range.upperBound - range.lowerBound + 1)
    }

    /// `count` random bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(count + 8)
        while result.count < count {
            var word = next()
            for _ in 0..<8 {
                result.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        result.removeLast(result.count - count)
        return result
    }

    /// Shuffles `array` in place (Fisher–Yates).
    public mutating func shuffle<T>(_ array: inout [T]) {
        guard array.count > 1 else { return }
        for i in stride(from: array.count - 1, to: 0, by: -1) {
            array.swapAt(i, below(i + 1))
        }
    }
}
