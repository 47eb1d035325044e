import Foundation
import Snapshot

/// Turns a ``FetchPredicate`` and sort descriptors into SQL over the store's tables, with the
/// semantics ``PredicateEvaluator`` specifies.
///
/// SQL's three-valued logic is kept out: every condition it makes is 0 or 1, never NULL
/// (`col IS NOT NULL AND col < ?`, `col IS NULL OR col <> ?`), so `NOT` means what Swift's `!`
/// means and `== nil` holds exactly for NULL. To-one key paths become `LEFT JOIN`s (a missing
/// target reads as NULL), `any`/`all` over a to-many become `EXISTS` subqueries through the
/// foreign key or the join table, identifier sets become `Z_PK IN (…)`.
final class PredicateTranslator {
    /// The objects a condition is about: an entity under an alias, with the to-one joins its
    /// paths need.
    final class Scope {
        /// The entity the paths start at: the fetched one, or a sub-entity an earlier
        /// conjunct's entity test narrowed it to.
        var entity: String
        let alias: String
        var joins: [String: (alias: String, entity: String)] = [:]
        var joinClauses: [String] = []
        init(entity: String, alias: String) {
            self.entity = entity
            self.alias = alias
        }
    }

    /// What a path reads.
    enum Target {
        case attribute(Schema.Attribute, sql: String)
        case toOne(destination: String, sql: String)
        case toMany
    }

    let layout: CoreDataLayout
    let schema: Schema
    let storeIdentifier: String
    private(set) var arguments: [SQLArgument] = []
    private var aliases = 0

    init(layout: CoreDataLayout, schema: Schema, storeIdentifier: String) {
        self.layout = layout
        self.schema = schema
        self.storeIdentifier = storeIdentifier
    }

    func newAlias(_ prefix: String) -> String {
        aliases += 1
        return "\(prefix)\(aliases)"
    }

    // MARK: Paths

    /// The scope reached by following the to-one relationships `components` from `scope`
    /// (joining their tables), and the object's alias there.
    private func follow(_ components: ArraySlice<String>, from scope: Scope, path: PropertyPath) throws -> (alias: String, entity: String) {
        var alias = scope.alias
        var entity = scope.entity
        var prefix = ""
        for name in components {
            let table = try layout.table(entity)
            guard let property = schema.property(named: name, in: entity) else { throw unknown(name, entity, path) }
            guard case .relationship(let relationship) = property else {
                throw DataStoreError(
                    .invalidPredicate, "\(path) continues past the attribute \(name); only relationships can be followed.",
                    entityName: entity, propertyName: name)
            }
            guard case .foreignKey(let column)? = table.linksByName[name]?.storage else {
                throw DataStoreError(
                    .invalidPredicate, "\(path) goes through the to-many relationship \(name); use `any` or `all` to reach its objects.",
                    entityName: entity, propertyName: name)
            }
            prefix += name + "."
            if let joined = scope.joins[prefix] {
                alias = joined.alias
                entity = joined.entity
                continue
            }
            let next = newAlias("j")
            let destination = try layout.table(relationship.destination)
            scope.joinClauses.append("LEFT JOIN \(destination.name) \(next) ON \(next).Z_PK = \(alias).\(column)")
            scope.joins[prefix] = (next, relationship.destination)
            alias = next
            entity = relationship.destination
        }
        return (alias, entity)
    }

    /// What `path` reads from `scope`'s objects.
    func target(_ path: PropertyPath, in scope: Scope) throws -> Target {
        try checkComponents(path, scope)
        let (alias, entity) = try follow(path.components.dropLast(), from: scope, path: path)
        let name = path.components.last!
        let table = try layout.table(entity)
        if let column = table.columnsByAttribute[name] { return .attribute(column.attribute, sql: "\(alias).\(column.name)") }
        guard let link = table.linksByName[name] else {
            if schema.property(named: name, in: entity) == nil { throw unknown(name, entity, path) }
            throw DataStoreError(.unknownProperty, "\(path) names \(name), which the store does not map.", entityName: entity, propertyName: name)
        }
        if case .foreignKey(let column) = link.storage { return .toOne(destination: link.relationship.destination, sql: "\(alias).\(column)") }
        return .toMany
    }

    private func checkComponents(_ path: PropertyPath, _ scope: Scope) throws {
        if path.components.isEmpty || path.components.contains(where: \.isEmpty) {
            throw DataStoreError(
                .invalidPredicate, "The key path \"\(path)\" has an empty component; write property names joined by single dots.",
                entityName: scope.entity)
        }
    }

    private func unknown(_ name: String, _ entity: String, _ path: PropertyPath) -> DataStoreError {
        DataStoreError(
            .unknownProperty, "\(path) names \(name), which \(entity) neither declares nor inherits; use a property of the schema.",
            entityName: entity, propertyName: name)
    }

    // MARK: Predicates

    /// A condition, 0 or 1 for every row of `scope`.
    func condition(_ predicate: FetchPredicate, in scope: Scope) throws -> String {
        switch predicate {
        case .constant(let value):
            return value ? "1" : "0"
        case let .compare(path, comparison, value):
            return try compare(target(path, in: scope), comparison, value, path: path, scope: scope)
        case let .string(path, operation, needle, options):
            guard case .attribute(let attribute, let sql) = try target(path, in: scope), attribute.valueType == .string else {
                throw DataStoreError(
                    .typeMismatch, "A string operation reads \(path), which is not a string attribute; compare it with a value of its type instead.",
                    entityName: scope.entity, propertyName: path.description)
            }
            if needle.isEmpty { return "(\(sql) IS NOT NULL)" }
            // The evaluator's rule is a match by `Character` (grapheme clusters, canonical
            // equivalence). For a needle of printable ASCII characters that is a code-point
            // match (`instr`, `substr`) in a haystack of printable ASCII, and implies one in any
            // other haystack; anything else goes through the registered function.
            let function = "\(StringMatchFunction.name)(\(sql), ?, \(StringMatchFunction.code(operation)), \(options.rawValue))"
            if !options.isEmpty || !needle.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
                arguments.append(.text(needle))
                return "(\(sql) IS NOT NULL AND \(function))"
            }
            let plain: String
            // SQLite's substr and length count code points, as `unicodeScalars` does.
            switch operation {
            case .contains:
                arguments.append(.text(needle))
                plain = "instr(\(sql), ?) > 0"
            case .beginsWith:
                arguments.append(.integer(Int64(needle.unicodeScalars.count)))
                arguments.append(.text(needle))
                plain = "substr(\(sql), 1, ?) = ?"
            case .endsWith:
                arguments.append(.integer(-Int64(needle.unicodeScalars.count)))
                arguments.append(.text(needle))
                plain = "substr(\(sql), ?) = ?"
            }
            arguments.append(.text(needle))
            return "(\(sql) IS NOT NULL AND \(plain) AND (\(sql) NOT GLOB '*[^ -~]*' OR \(function)))"
        case .isNull(let path):
            switch try target(path, in: scope) {
            case .attribute(_, let sql), .toOne(_, let sql): return "(\(sql) IS NULL)"
            case .toMany: return "0"
            }
        case let .oneOf(path, values):
            let target = try target(path, in: scope)
            let parts = try values.map { try compare(target, .equal, $0, path: path, scope: scope) }
            return parts.isEmpty ? "0" : "(" + parts.joined(separator: " OR ") + ")"
        case .identifierIn(let identifiers):
            let keys = identifiers.compactMap { id -> Int64? in
                guard id.storeIdentifier == storeIdentifier, schema.isEntity(id.entityName, kindOf: scope.entity), case .integer(let key) = id.primaryKey else { return nil }
                return key
            }.sorted()
            if keys.isEmpty { return "0" }
            for key in keys { arguments.append(.integer(key)) }
            return "(\(scope.alias).Z_PK IN (" + Array(repeating: "?", count: keys.count).joined(separator: ",") + "))"
        case .and(let predicates):
            if predicates.isEmpty { return "1" }
            // After an entity test, the later conjuncts may read the sub-entity's columns (rows of
            // the same root table).
            let entity = scope.entity
            defer { scope.entity = entity }
            var parts: [String] = []
            for predicate in predicates {
                parts.append(try condition(predicate, in: scope))
                if case .entity(let name, _) = predicate, schema.isEntity(name, kindOf: scope.entity) { scope.entity = name }
            }
            return "(" + parts.joined(separator: " AND ") + ")"
        case let .entity(name, includesSubentities):
            let table = try layout.table(name)
            guard schema.rootEntity(of: name)?.name == schema.rootEntity(of: scope.entity)?.name else { return "0" }
            let kinds = includesSubentities ? table.kinds : [table.number]
            return "(\(scope.alias).Z_ENT IN (\(kinds.map(String.init).joined(separator: ", "))))"
        case .or(let predicates):
            if predicates.isEmpty { return "0" }
            return "(" + (try predicates.map { try condition($0, in: scope) }).joined(separator: " OR ") + ")"
        case .not(let inner):
            return "(NOT \(try condition(inner, in: scope)))"
        case let .any(path, inner):
            return "EXISTS (\(try related(path, inner, negated: false, in: scope)))"
        case let .all(path, inner):
            return "NOT EXISTS (\(try related(path, inner, negated: true, in: scope)))"
        }
    }

    /// `SELECT 1` over the objects `path` reaches from `scope`'s object that satisfy `inner`
    /// (with `negated`, that do not).
    private func related(_ path: PropertyPath, _ inner: FetchPredicate, negated: Bool, in scope: Scope) throws -> String {
        try checkComponents(path, scope)
        let (alias, entity) = try follow(path.components.dropLast(), from: scope, path: path)
        let name = path.components.last!
        let table = try layout.table(entity)
        guard let link = table.linksByName[name] else {
            if table.columnsByAttribute[name] != nil {
                throw DataStoreError(
                    .invalidPredicate, "\(path) must end in a relationship for `any` or `all`; \(name) is an attribute.",
                    entityName: entity, propertyName: name)
            }
            throw unknown(name, entity, path)
        }
        let destination = try layout.table(link.relationship.destination)
        let sub = Scope(entity: link.relationship.destination, alias: newAlias("s"))
        var from: String
        var match: String
        switch link.storage {
        case .foreignKey(let column):
            from = "\(destination.name) \(sub.alias)"
            match = "\(sub.alias).Z_PK = \(alias).\(column)"
        case let .inverseForeignKey(_, column):
            from = "\(destination.name) \(sub.alias)"
            match = "\(sub.alias).\(column) = \(alias).Z_PK"
        case let .join(joinTable, own, other):
            let j = newAlias("m")
            from = "\(joinTable) \(j) JOIN \(destination.name) \(sub.alias) ON \(sub.alias).Z_PK = \(j).\(other)"
            match = "\(j).\(own) = \(alias).Z_PK"
        }
        let innerSQL = try condition(inner, in: sub)
        from += sub.joinClauses.isEmpty ? "" : " " + sub.joinClauses.joined(separator: " ")
        return "SELECT 1 FROM \(from) WHERE \(match) AND \(negated ? "NOT " : "")\(innerSQL)"
    }

    private func compare(_ target: Target, _ comparison: FetchPredicate.Comparison, _ value: PropertyValue, path: PropertyPath, scope: Scope) throws -> String {
        let sql: String
        let argument: SQLArgument
        switch target {
        case .toMany:
            throw DataStoreError(
                .invalidPredicate, "\(path) is a to-many relationship; use `any` or `all` to compare its objects.",
                entityName: scope.entity, propertyName: path.description)
        case let .toOne(destination, column):
            sql = column
            if value.isNull { return nullComparison(sql, comparison) }
            guard case .toOne(let id?) = value else { throw mismatch(path, "a to-one relationship", value, scope) }
            guard id.storeIdentifier == storeIdentifier, schema.isEntity(id.entityName, kindOf: destination), case .integer(let key) = id.primaryKey else {
                // An object of another store or entity is never the target.
                return comparison == .notEqual ? "1" : "0"
            }
            argument = .integer(key)
        case let .attribute(attribute, column):
            sql = column
            if value.isNull { return nullComparison(sql, comparison) }
            argument = try self.argument(for: value, of: attribute, path: path, scope: scope)
        }
        arguments.append(argument)
        switch comparison {
        case .equal: return "(\(sql) IS NOT NULL AND \(sql) = ?)"
        case .notEqual: return "(\(sql) IS NULL OR \(sql) <> ?)"
        case .less: return "(\(sql) IS NOT NULL AND \(sql) < ?)"
        case .lessOrEqual: return "(\(sql) IS NOT NULL AND \(sql) <= ?)"
        case .greater: return "(\(sql) IS NOT NULL AND \(sql) > ?)"
        case .greaterOrEqual: return "(\(sql) IS NOT NULL AND \(sql) >= ?)"
        }
    }

    private func nullComparison(_ sql: String, _ comparison: FetchPredicate.Comparison) -> String {
        switch comparison {
        case .equal: "(\(sql) IS NULL)"
        case .notEqual: "(\(sql) IS NOT NULL)"
        default: "0"
        }
    }

    /// The column form of `value`, compared with `attribute`'s column: numbers with numbers,
    /// others with their own kind.
    private func argument(for value: PropertyValue, of attribute: Schema.Attribute, path: PropertyPath, scope: Scope) throws -> SQLArgument {
        switch (attribute.valueType, value) {
        case (.bool, .bool(let v)): return .integer(v ? 1 : 0)
        case (.int, _), (.int8, _), (.int16, _), (.int32, _), (.int64, _), (.uint, _), (.uint8, _), (.uint16, _), (.uint32, _), (.uint64, _),
            (.float, _), (.double, _):
            switch value {
            case .int(let v): return .integer(Int64(v))
            case .int8(let v): return .integer(Int64(v))
            case .int16(let v): return .integer(Int64(v))
            case .int32(let v): return .integer(Int64(v))
            case .int64(let v): return .integer(v)
            case .uint(let v) where v <= UInt(Int64.max): return .integer(Int64(v))
            case .uint8(let v): return .integer(Int64(v))
            case .uint16(let v): return .integer(Int64(v))
            case .uint32(let v): return .integer(Int64(v))
            case .uint64(let v) where v <= UInt64(Int64.max): return .integer(Int64(v))
            case .float(let v): return .real(Double(v))
            case .double(let v): return .real(v)
            case .decimal(let v): return .real(NSDecimalNumber(decimal: v).doubleValue)
            default: throw mismatch(path, attribute.valueType.description, value, scope)
            }
        case (.string, .string(let v)): return .text(v)
        case (.date, .date(let v)): return .real(v.timeIntervalSinceReferenceDate)
        case (.url, .url(let v)): return .text(v.absoluteString)
        case (.uuid, .uuid(let v)): return .blob(withUnsafeBytes(of: v.uuid) { Data($0) })
        case (.data, .data(let v)): return .blob(v)
        case (.decimal, _), (.array, _), (.codable, _):
            throw DataStoreError(
                .unsupportedFeature, "The Core Data-shaped SQLite store does not compare \(attribute.valueType) attributes in SQL.",
                entityName: scope.entity, propertyName: path.description)
        default:
            throw mismatch(path, attribute.valueType.description, value, scope)
        }
    }

    private func mismatch(_ path: PropertyPath, _ type: String, _ value: PropertyValue, _ scope: Scope) -> DataStoreError {
        DataStoreError(
            .typeMismatch, "\(path) holds a \(type), compared with a \(value.caseName); compare it with a value of its own type.",
            entityName: scope.entity, propertyName: path.description)
    }

    // MARK: Sorts

    /// `ORDER BY` terms for `descriptors` (then `Z_PK`, the store's own order, for ties).
    func orderBy(_ descriptors: [FetchSortDescriptor], in scope: Scope) throws -> String {
        var terms: [String] = []
        for descriptor in descriptors {
            switch try target(descriptor.path, in: scope) {
            case .attribute(let attribute, let sql):
                if case .array = attribute.valueType { throw unsortable(descriptor.path, scope) }
                if case .codable = attribute.valueType { throw unsortable(descriptor.path, scope) }
                if attribute.valueType == .decimal { throw unsortable(descriptor.path, scope) }
                terms.append("\(sql) \(descriptor.order == .forward ? "ASC" : "DESC")")
            case .toOne(_, let sql):
                terms.append("\(sql) \(descriptor.order == .forward ? "ASC" : "DESC")")
            case .toMany:
                throw DataStoreError(
                    .invalidPredicate, "\(descriptor.path) is a to-many relationship, which has no one value to sort by.",
                    entityName: scope.entity, propertyName: descriptor.path.description)
            }
        }
        terms.append("\(scope.alias).Z_PK ASC")
        return terms.joined(separator: ", ")
    }

    private func unsortable(_ path: PropertyPath, _ scope: Scope) -> DataStoreError {
        DataStoreError(.unsupportedFeature, "The Core Data-shaped SQLite store does not sort by \(path) in SQL.", entityName: scope.entity, propertyName: path.description)
    }
}
