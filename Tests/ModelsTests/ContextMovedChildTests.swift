import Foundation
import Models
import Snapshot
import SnapshotTestSupport
import Testing

/// The context's delete rules spare a child that another pending change moves away.
@Suite struct ContextMovedChildTests {
    typealias World = ContextSameObjectTwiceTests.World

    /// An item another owner's pending to-many takes is spared by its old owner's cascade
    /// (aCascadeSparesAnItemMovedToAnotherOwnerFromEitherSide) — also when the item has a
    /// pending update of its own that leaves its owner alone. The context read the item's
    /// stale to-one from that update and cascaded it: the save deleted the item the store
    /// would have moved.
    @Test func aCascadeSparesAnItemMovedByAnotherOwnersToManyWhenTheItemHasAnUnrelatedUpdate() throws {
        let w = try World()
        defer { w.temporary.remove() }
        try w.context.update(w["I1"], ["title": "renamed"])
        try w.context.update(w["O2"], ["items": .toMany([w["I1"]])])
        try w.context.delete(w["O"])
        #expect(w.context.deletedIdentifiers == [w["O"], w["I2"]])
        try w.context.save()
        #expect(try w.all("Item") == [w["I1"]])
        #expect(try w.stored("I1")["owner"] == .toOne(w["O2"]))
        #expect(try w.stored("I1")["title"] == "renamed")
    }
}
