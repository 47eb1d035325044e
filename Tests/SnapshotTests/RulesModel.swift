import Foundation
import Snapshot

/// A model with one relationship per delete rule, bounded counts, a compound uniqueness
/// constraint and an inheritance tree.
enum RulesModel {
    static let schema: Schema = {
        do {
            return try Schema([
                .init(
                    "Parent", attributes: [.init("name", .string, options: .unique), .init("age", .int, isOptional: true)],
                    relationships: [
                        .init("kids", destination: "Kid", .toMany, inverse: "parent", deleteRule: .cascade),
                        .init("pets", destination: "Pet", .toMany, inverse: "parent", deleteRule: .nullify, maximumCount: 2),
                        .init("guardian", destination: "Guardian", inverse: "ward", deleteRule: .deny),
                        .init("notes", destination: "Note", .toMany, inverse: "parent", deleteRule: .noAction),
                    ]),
                .init(
                    "Kid", attributes: [.init("first", .string), .init("last", .string), .init("age", .int, defaultValue: 0)],
                    relationships: [.init("parent", destination: "Parent", inverse: "kids")], uniquenessConstraints: [["first", "last"]]),
                .init("Pet", attributes: [.init("name", .string)], relationships: [.init("parent", destination: "Parent", inverse: "pets")]),
                .init("Guardian", attributes: [.init("name", .string)], relationships: [.init("ward", destination: "Parent", inverse: "guardian")]),
                .init("Note", attributes: [.init("text", .string)], relationships: [.init("parent", destination: "Parent", inverse: "notes")]),
                .init(
                    "Team", attributes: [.init("name", .string)],
                    relationships: [.init("members", destination: "Parent", .toMany, minimumCount: 1)]),
                .init("Animal", attributes: [.init("name", .string, options: .unique)], indexes: [["name"]]),
                .init("Dog", superentity: "Animal", attributes: [.init("breed", .string, isOptional: true)]),
                .init("Cat", superentity: "Animal", attributes: [.init("indoor", .bool)]),
            ])
        } catch {
            preconditionFailure("\(error)")
        }
    }()

    static func make(_ entity: String, _ values: [String: PropertyValue]) -> DefaultSnapshot {
        DefaultSnapshot(persistentIdentifier: .temporary(entityName: entity), values: values)
    }
}
