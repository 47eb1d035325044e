import EngineTestSupport
import Foundation
import Models
import Snapshot

/// A container of the README's blog model (Cloud: posts, attachments, tags; Local: drafts) in
/// a temporary directory.
final class ModelsHome: Sendable {
    let temporary = TemporaryDirectory("walstore-models-typed")

    static let schema: Schema = {
        do { return try Schema(models: Post.self, Attachment.self, Tag.self, Draft.self) } catch { preconditionFailure("\(error)") }
    }()

    init() throws {}
    deinit { temporary.remove() }

    var configurations: [StoreContainer.Configuration] {
        [
            .init(name: "Local", entityNames: ["Draft"], path: temporary.path + "/Local"),
            .init(name: "Cloud", entityNames: ["Post", "Attachment", "Tag"], path: temporary.path + "/Cloud"),
        ]
    }

    func container() throws -> StoreContainer { try StoreContainer(schema: Self.schema, configurations: configurations) }

    func context() throws -> ModelContext { ModelContext(try container()) }
}
