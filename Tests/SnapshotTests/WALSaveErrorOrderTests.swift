import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// A refused save's error does not depend on the order a dictionary lists the values in.
@Suite struct WALSaveErrorOrderTests {
    @Test func aStatementWithSeveralUnknownPropertiesNamesTheFirstInNameOrder() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        var post = BlogModel.post(title: "p", date: Date(timeIntervalSinceReferenceDate: 0))
        for i in (1...12).reversed() { post.values["unknown\(String(format: "%02d", i))"] = .string("x") }
        let error = try #require(throws: DataStoreError.self) { try store.save(DataStoreSaveChangesRequest(inserted: [post])) }
        #expect(error.code == .unknownProperty)
        #expect(error.propertyName == "unknown01")
    }
}
