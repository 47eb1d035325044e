import Foundation
import Snapshot

/// Logical identifiers: the names the harness gives objects, common to both stores (which mint
/// different primary keys). `Post#7` is the object made by the 7th insert of a run; an insert
/// that upserts into a stored object becomes another name of it, and the object is shown under
/// its smallest name.
enum Logical {
    static let store = "logical"

    static func id(_ entity: String, _ number: Int) -> PersistentIdentifier {
        // The store identifier and entity name are never empty, so this cannot throw.
        (try? PersistentIdentifier.identifier(for: store, entityName: entity, primaryKey: .integer(Int64(number))))!
    }

    static func number(_ id: PersistentIdentifier) -> Int {
        if case .integer(let n) = id.primaryKey { return Int(n) }
        return -1
    }

    static func text(_ id: PersistentIdentifier) -> String {
        id.storeIdentifier == store ? "\(id.entityName)#\(number(id))" : "?\(id)"
    }
}

/// One step of a differential run, stated in logical identifiers.
enum Step: Sendable, CustomStringConvertible {
    /// One save request.
    case save(SaveStep)
    /// One fetch, count or identifier fetch.
    case fetch(FetchStep)
    /// `delete(DataStoreBatchDeleteRequest(entityName:predicate:))`.
    case batchDelete(entity: String, predicate: FetchPredicate?)
    /// Both stores closed and opened again.
    case reopen

    var description: String {
        switch self {
        case .save(let save): save.description
        case .fetch(let fetch): fetch.description
        case let .batchDelete(entity, predicate):
            "batchDelete(\(entity)\(predicate.map { ", where: " + Describe.predicate($0) } ?? ""))"
        case .reopen: "reopen()"
        }
    }
}

/// A save: inserts (full snapshots under new logical identifiers), updates (the properties
/// changed; the harness sends the object's whole last known snapshot with them applied) and
/// deletes.
struct SaveStep: Sendable, CustomStringConvertible {
    struct Change: Sendable {
        var id: PersistentIdentifier
        var values: [String: PropertyValue]
    }

    var inserted: [DefaultSnapshot] = []
    var updated: [Change] = []
    var deleted: [PersistentIdentifier] = []

    var itemCount: Int { inserted.count + updated.count + deleted.count }

    /// The save without its `index`th item (inserts, then updates, then deletes).
    func removing(item index: Int) -> SaveStep {
        var copy = self
        if index < inserted.count {
            copy.inserted.remove(at: index)
        } else if index < inserted.count + updated.count {
            copy.updated.remove(at: index - inserted.count)
        } else {
            copy.deleted.remove(at: index - inserted.count - updated.count)
        }
        return copy
    }

    var description: String {
        var parts: [String] = []
        if !inserted.isEmpty {
            parts.append("inserted: [\n" + inserted.map { "        " + Describe.snapshot($0) }.joined(separator: ",\n") + "]")
        }
        if !updated.isEmpty {
            parts.append("updated: [\n" + updated.map { "        " + Describe.change($0) }.joined(separator: ",\n") + "]")
        }
        if !deleted.isEmpty { parts.append("deleted: [" + deleted.map(Logical.text).joined(separator: ", ") + "]") }
        return "save(" + parts.joined(separator: ",\n    ") + ")"
    }
}

/// A fetch of one of the three kinds.
struct FetchStep: Sendable, CustomStringConvertible {
    enum Kind: String, Sendable { case fetch, fetchCount, fetchIdentifiers }
    var kind: Kind
    var descriptor: FetchDescriptor

    var description: String {
        var parts = [descriptor.entityName]
        if let predicate = descriptor.predicate { parts.append("where: " + Describe.predicate(predicate)) }
        if !descriptor.sortBy.isEmpty {
            parts.append("sortBy: [" + descriptor.sortBy.map { "\($0.path)\($0.order == .reverse ? " desc" : "")" }.joined(separator: ", ") + "]")
        }
        if let offset = descriptor.fetchOffset { parts.append("offset: \(offset)") }
        if let limit = descriptor.fetchLimit { parts.append("limit: \(limit)") }
        if !descriptor.propertiesToFetch.isEmpty { parts.append("properties: \(descriptor.propertiesToFetch)") }
        if !descriptor.relationshipKeyPathsForPrefetching.isEmpty {
            parts.append("prefetch: [" + descriptor.relationshipKeyPathsForPrefetching.map(\.description).joined(separator: ", ") + "]")
        }
        return "\(kind.rawValue)(" + parts.joined(separator: ", ") + ")"
    }
}

/// Readable, Swift-ish text for values, snapshots and predicates in logical identifiers.
enum Describe {
    static func value(_ value: PropertyValue) -> String {
        switch value {
        case .null: return "nil"
        case .bool(let v): return "\(v)"
        case .int(let v): return "\(v)"
        case .double(let v): return "\(v) as Double"
        case .string(let v): return "\"\(v.unicodeScalars.map { $0.isASCII ? String($0) : "\\u{\(String($0.value, radix: 16))}" }.joined())\""
        case .date(let v): return "Date(\(v.timeIntervalSinceReferenceDate))"
        case .toOne(let id?): return Logical.text(id)
        case .toOne(nil): return "nil"
        case .toMany(let ids): return "[" + ids.sorted().map(Logical.text).joined(separator: ", ") + "]"
        default: return "\(value)"
        }
    }

    static func values(_ values: [String: PropertyValue]) -> String {
        values.sorted { $0.key < $1.key }.map { "\($0.key): \(value($0.value))" }.joined(separator: ", ")
    }

    static func snapshot(_ snapshot: DefaultSnapshot) -> String {
        "\(Logical.text(snapshot.persistentIdentifier))(\(values(snapshot.values)))"
    }

    static func change(_ change: SaveStep.Change) -> String {
        "\(Logical.text(change.id)) ← (\(values(change.values)))"
    }

    static func predicate(_ predicate: FetchPredicate) -> String {
        switch predicate {
        case .constant(let v): return v ? "true" : "false"
        case let .compare(path, comparison, v):
            let op: String = switch comparison {
            case .equal: "=="
            case .notEqual: "!="
            case .less: "<"
            case .lessOrEqual: "<="
            case .greater: ">"
            case .greaterOrEqual: ">="
            }
            return "\(path) \(op) \(value(v))"
        case let .string(path, operation, needle, options):
            var flags = ""
            if options.contains(.caseInsensitive) { flags += "c" }
            if options.contains(.diacriticInsensitive) { flags += "d" }
            return "\(path).\(operation.rawValue)\(flags.isEmpty ? "" : "[\(flags)]")(\(value(.string(needle))))"
        case .isNull(let path): return "\(path) == nil"
        case let .oneOf(path, values): return "\(path) in [" + values.map(value).joined(separator: ", ") + "]"
        case .identifierIn(let ids): return "id in [" + ids.sorted().map(Logical.text).joined(separator: ", ") + "]"
        case .and(let parts): return parts.isEmpty ? "true" : "(" + parts.map(self.predicate).joined(separator: " && ") + ")"
        case .or(let parts): return parts.isEmpty ? "false" : "(" + parts.map(self.predicate).joined(separator: " || ") + ")"
        case .not(let inner): return "!" + self.predicate(inner)
        case let .any(path, inner): return "\(path).any { \(self.predicate(inner)) }"
        case let .all(path, inner): return "\(path).all { \(self.predicate(inner)) }"
        case let .entity(name, includesSubentities): return includesSubentities ? "is \(name)" : "entity == \(name)"
        }
    }
}
