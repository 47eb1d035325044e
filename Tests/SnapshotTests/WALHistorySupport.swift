import Engine
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

extension WALHome {
    /// The home's configuration with history on (and the given retention), compaction manual.
    func historyConfiguration(_ history: WALStoreConfiguration.History = .enabled(), compressionLevel: Int? = nil) -> WALStoreConfiguration {
        var c = configuration
        c.history = history
        c.options.compaction = .manual
        if let compressionLevel { c.options.compressionLevel = compressionLevel }
        return c
    }
}

extension WALDataStore {
    /// The whole history, oldest first.
    func allHistory() throws -> [DefaultHistoryTransaction] { try fetchHistory(HistoryDescriptor()) }

    /// The tokens of the `H` keys the engine holds.
    func historyKeyTokens() throws -> [UInt64] {
        try engine.scan(.prefix([0x48])).collect().map { $0.key.dropFirst().reduce(0) { $0 << 8 | UInt64($1) } }
    }

    /// The newest transaction's token.
    func lastToken() throws -> DefaultHistoryToken? { try fetchHistory(HistoryDescriptor(fetchLimit: 1, sortOrder: .newestFirst)).first?.token }
}

/// A change described without the transaction: kind, object, and the updated names or the
/// tombstone.
enum ChangeSummary: Hashable, CustomStringConvertible {
    case insert(PersistentIdentifier)
    case update(PersistentIdentifier, [String])
    case delete(PersistentIdentifier, [String: PropertyValue])

    init(_ change: HistoryChange) {
        switch change {
        case .insert(let c): self = .insert(c.changedPersistentIdentifier)
        case .update(let c): self = .update(c.changedPersistentIdentifier, c.updatedAttributes)
        case .delete(let c): self = .delete(c.changedPersistentIdentifier, Dictionary(uniqueKeysWithValues: c.tombstone.map { ($0.name, $0.value) }))
        }
    }

    var description: String {
        switch self {
        case .insert(let id): "insert \(id.entityName)"
        case .update(let id, let names): "update \(id.entityName) \(names)"
        case .delete(let id, let t): "delete \(id.entityName) \(t)"
        }
    }
}

extension DefaultHistoryTransaction {
    var summaries: [ChangeSummary] { changes.map(ChangeSummary.init) }
}

/// Notes with lines: `Note.title` and `Line.text` are kept in tombstones, `Note.draft` is
/// ephemeral; deleting a note cascades to its lines.
enum NotesModel {
    static let schema: Schema = {
        do {
            return try Schema([
                .init(
                    "Note",
                    attributes: [
                        .init("title", .string, options: .preserveValueOnDeletion),
                        .init("body", .string, isOptional: true),
                        .init("stars", .int, isOptional: true, options: .preserveValueOnDeletion),
                        .init("draft", .string, isOptional: true, options: .ephemeral),
                    ],
                    relationships: [.init("lines", destination: "Line", .toMany, inverse: "note", deleteRule: .cascade)]),
                .init(
                    "Line",
                    attributes: [.init("text", .string, options: .preserveValueOnDeletion)],
                    relationships: [.init("note", destination: "Note", inverse: "lines")]),
            ])
        } catch {
            preconditionFailure("the notes model is a fixed, consistent schema: \(error)")
        }
    }()
}

/// The code of the `DataStoreError` that `body` throws (nil when it throws none, or another
/// error).
func errorCode(_ body: () throws -> Any) -> DataStoreError.Code? {
    do {
        _ = try body()
        return nil
    } catch let error as DataStoreError {
        return error.code
    } catch {
        return nil
    }
}
