import Foundation
import Models
import Snapshot
import SnapshotTestSupport
import Testing

/// A context refuses what the store refuses, before reading, whatever is pending.
@Suite struct ContextRequestCheckTests {
    @Test func aContextRefusesAMismatchedComparisonOrAToManySortWithOrWithoutPendingChanges() throws {
        let home = ContainerHome()
        defer { home.temporary.remove() }
        let container = try home.open()
        let context = StoreContext(container)
        let refused: [(Snapshot.FetchDescriptor, DataStoreError.Code, String)] = [
            (Snapshot.FetchDescriptor(entityName: "Post", predicate: .attribute("date") >= "a"), .typeMismatch, "date"),
            (Snapshot.FetchDescriptor(entityName: "Post", sortBy: [FetchSortDescriptor("tags")]), .invalidPredicate, "tags"),
            (Snapshot.FetchDescriptor(entityName: "Post", predicate: .relationship("tags").any(.attribute("name") == 3)), .typeMismatch, "name"),
        ]
        func check(_ label: String) {
            for (descriptor, code, property) in refused {
                for pending in [true, false] {
                    do {
                        _ = try context.fetch(descriptor, includePendingChanges: pending)
                        Issue.record("\(label): not refused")
                    } catch let error as DataStoreError {
                        #expect(error.code == code && error.propertyName == property, "\(label): \(error)")
                    } catch {
                        Issue.record("\(label): \(error)")
                    }
                }
            }
        }
        check("empty")
        _ = try context.insert(BlogModel.post(title: "pending", date: Date()))
        check("a pending insert")
        try context.save()
        check("stored")
    }
}
