import Foundation
import Testing

import Snapshot

@Suite struct PropertyValueDataOrderTests {
    /// Data orders by its bytes as unsigned numbers, lexicographically; a prefix comes first.
    @Test func dataOrdersByUnsignedBytesThenByLength() {
        let ascending: [Data] = [
            Data(), Data([0]), Data([0, 0]), Data([0, 1]), Data([1]), Data([1, 255]), Data([127]), Data([128]), Data([255]),
            Data([255, 0]),
        ]
        for (i, a) in ascending.enumerated() {
            for (j, b) in ascending.enumerated() {
                #expect((PropertyValue.data(a) < .data(b)) == (i < j), "\(Array(a)) vs \(Array(b))")
                #expect((PropertyValue.data(a) == .data(b)) == (i == j), "\(Array(a)) vs \(Array(b))")
            }
        }
    }

    /// Slices of a larger buffer compare by their own bytes, not by where they sit in it.
    @Test func dataSlicesCompareByTheirOwnBytes() {
        let buffer = Data([9, 1, 2, 3, 9, 1, 2, 4])
        let first = buffer[1..<4]  // 1 2 3
        let second = buffer[5..<8]  // 1 2 4
        #expect(PropertyValue.data(first) < .data(second))
        #expect(PropertyValue.data(first) == .data(Data([1, 2, 3])))
        #expect(PropertyValue.data(second) != .data(Data([1, 2, 3])))
    }

    /// A megabyte that differs only in its last byte is told apart, in the right direction.
    @Test func largeValuesDifferingInTheLastByteAreOrdered() {
        var a = Data(repeating: 7, count: 1 << 20)
        var b = a
        a[a.count - 1] = 1
        b[b.count - 1] = 200
        #expect(PropertyValue.data(a) < .data(b))
        #expect(PropertyValue.data(a) != .data(b))
        b[b.count - 1] = 1
        #expect(PropertyValue.data(a) == .data(b))
    }
}
