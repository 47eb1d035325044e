import Foundation
import Models
import Snapshot
import SnapshotTestSupport
import Testing

/// The one-line container (`StoreContainer(for:)`, SwiftData's `ModelContainer(for:)`) and the
/// default store location.
@StoreActor @Suite struct ContainerDefaultStoreTests {
    @Test func theDefaultDirectoryFollowsTheXDGRuleAndNamesTheProcess() {
        let xdg = StoreContainer.defaultDirectory(environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/ann"], processName: "Blog")
        #expect(xdg.path == "/data/Blog")
        let home = StoreContainer.defaultDirectory(environment: ["HOME": "/home/ann"], processName: "Blog")
        #expect(home.path == "/home/ann/.local/share/Blog")
        let relative = StoreContainer.defaultDirectory(environment: ["XDG_DATA_HOME": "data", "HOME": "/home/ann"], processName: "Blog")
        #expect(relative.path == "/home/ann/.local/share/Blog", "a relative XDG_DATA_HOME is ignored")
    }

    @Test func aConfigurationWithoutALocationIsTheDefaultStore() {
        let configuration = StoreContainer.Configuration()
        #expect(configuration.name == "default" && configuration.entityNames == nil)
        #expect(configuration.path == StoreContainer.defaultDirectory.appendingPathComponent("default.store").path)
        #expect(StoreContainer.Configuration(name: "Cache").path == StoreContainer.defaultDirectory.appendingPathComponent("Cache.store").path)
    }

    @Test func theOneLineContainerKeepsEveryModelInOneStoreAtTheDefaultLocation() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("default-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let container = try StoreContainer(models: [Post.self, Attachment.self, Tag.self], directory: directory)
            defer { try? container.close() }
            #expect(container.configurations.map(\.name) == ["default"])
            let context = ModelContext(container)
            let post = Post()
            post.title = "one line"
            let tag = Tag()
            tag.name = "swift"
            post.tags = [tag]
            try context.insert(post)
            try context.save()
        }
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("default.store").path))
        let reopened = try StoreContainer(models: [Post.self, Attachment.self, Tag.self], directory: directory)
        defer { try? reopened.close() }
        let posts = try ModelContext(reopened).fetch(FetchDescriptor<Post>())
        #expect(posts.map(\.title) == ["one line"] && posts.first?.tags.map(\.name) == ["swift"])
    }
}
