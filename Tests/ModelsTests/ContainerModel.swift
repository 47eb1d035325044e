import Engine
import EngineTestSupport
import Foundation
import Models
import Snapshot
import SnapshotTestSupport

/// The seed's three stores over one schema: the blog (`Post`, `Attachment`, `Tag`) in `Cloud`,
/// device settings in `Local`, and an inheritance tree (`Item` with `Note`) in `Shared`.
enum ContainerModel {
    static let schema: Schema = {
        do {
            return try Schema(
                BlogModel.schema.entities + [
                    .init("Setting", attributes: [.init("key", .string, options: .unique), .init("value", .string, isOptional: true)]),
                    .init("Item", isAbstract: true, attributes: [.init("title", .string)], indexes: [["title"]]),
                    .init("Note", superentity: "Item", attributes: [.init("body", .string, isOptional: true)]),
                ])
        } catch {
            preconditionFailure("\(error)")
        }
    }()

    static func configurations(in directory: String, options: LogStore.Options = LogStore.Options()) -> [StoreContainer.Configuration] {
        [
            .init(name: "Local", entityNames: ["Setting"], path: directory + "/local", options: options),
            .init(name: "Cloud", entityNames: ["Post", "Tag", "Attachment"], path: directory + "/cloud", options: options),
            .init(name: "Shared", entityNames: ["Note"], path: directory + "/shared", options: options),
        ]
    }

    static func setting(_ key: String, _ value: String?) -> DefaultSnapshot {
        DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: "Setting"), values: ["key": .string(key), "value": value.map(PropertyValue.string) ?? .null])
    }

    static func note(_ title: String, body: String? = nil) -> DefaultSnapshot {
        DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: "Note"), values: ["title": .string(title), "body": body.map(PropertyValue.string) ?? .null])
    }
}
