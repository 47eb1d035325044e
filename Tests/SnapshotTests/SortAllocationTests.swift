import CAllocationCounter
import Foundation
import Testing

@testable import Snapshot

/// A fetch's sort compares plain keys: sorting 10,000 matches allocates what sorting 1,000 does
/// (no allocation per comparison), and a top-k window allocates nothing per match it is
/// offered once its slots exist (counted with the tests' allocation counter).
@Suite(.serialized) struct SortAllocationTests {
    /// Sort values for `count` matches: a date, then a string of 8 bytes or more (compared by
    /// its tail when the dates tie).
    static func rows(_ count: Int) -> [[PropertyValue]] {
        var rows: [[PropertyValue]] = []
        for i in 0..<count {
            rows.append([.date(Date(timeIntervalSinceReferenceDate: Double((i * 7919) % 1_000))), .string("name \(i % 97) and more")])
        }
        return rows
    }

    static let descriptors = [FetchSortDescriptor("date", order: .reverse), FetchSortDescriptor("name")]

    /// A full window of `rows`, offered (not counted).
    static func window(_ rows: [[PropertyValue]], descriptors: [FetchSortDescriptor]) -> FetchWindow<Int> {
        var window = FetchWindow<Int>(sortBy: descriptors, offset: nil, limit: nil)
        var i = 0
        while i < rows.count {
            window.offer(
                i, values: rows[i], primaryKey: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, UInt8(i >> 8 & 0xFF), UInt8(i & 0xFF))))
            i += 1
        }
        return window
    }

    /// The allocations of sorting a full window of `count` matches under `descriptors`.
    static func sortAllocations(_ count: Int, _ descriptors: [FetchSortDescriptor]) -> Int {
        let window = window(Self.rows(count).map { Array($0.prefix(descriptors.count)) }, descriptors: descriptors)
        var sorted: [Int] = []
        let allocations = FetchAllocationTests.allocations { sorted = window.window() }
        #expect(sorted.count == count)
        return allocations
    }

    @Test func sortingTenThousandDateKeysAllocatesWhatSortingAThousandDoes() throws {
        try #require(walstore_allocations_available() == 1, "this build has the allocation counter")
        let byDate = [FetchSortDescriptor("date")]
        let few = Self.sortAllocations(1_000, byDate)
        let many = Self.sortAllocations(10_000, byDate)
        #expect(many <= few + 2 && few <= 16, "\(few) allocations for 1,000 matches, \(many) for 10,000")
    }

    @Test func sortingByADateThenALongStringAllocatesWhatSortingAThousandDoes() throws {
        try #require(walstore_allocations_available() == 1, "this build has the allocation counter")
        let few = Self.sortAllocations(1_000, Self.descriptors)
        let many = Self.sortAllocations(10_000, Self.descriptors)
        #expect(many <= few + 2 && few <= 16, "\(few) allocations for 1,000 matches, \(many) for 10,000")
    }

    @Test func aTopKWindowAllocatesNothingPerMatchOffered() throws {
        try #require(walstore_allocations_available() == 1, "this build has the allocation counter")
        func allocations(_ count: Int) -> Int {
            let rows = Self.rows(count)
            var first: [Int] = []
            let allocations = FetchAllocationTests.allocations {
                var window = FetchWindow<Int>(sortBy: Self.descriptors, offset: 5, limit: 20)
                var i = 0
                while i < rows.count {
                    window.offer(
                        i, values: rows[i], primaryKey: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, UInt8(i >> 8 & 0xFF), UInt8(i & 0xFF))))
                    i += 1
                }
                first = window.window()
            }
            #expect(first.count == 20)
            return allocations
        }
        let few = allocations(1_000)
        let many = allocations(10_000)
        #expect(many <= few + 2, "\(few) allocations for 1,000 matches, \(many) for 10,000")
    }
}
