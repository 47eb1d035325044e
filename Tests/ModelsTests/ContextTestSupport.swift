import Engine
import EngineTestSupport
import Foundation
import Models
import Snapshot
import SnapshotTestSupport

/// A container of the three-store model in a temporary directory.
struct ContainerHome {
    let temporary = TemporaryDirectory("walstore-models")
    var schema: Schema = ContainerModel.schema
    var configurations: [StoreContainer.Configuration] { ContainerModel.configurations(in: temporary.path) }

    func open() throws -> StoreContainer { try StoreContainer(schema: schema, configurations: configurations) }
}

/// What SwiftData's context answers for a fetch with pending changes: the store's objects with
/// the pending changes applied (updates by their new values, deletes removed), stored objects
/// in the store's own order (primary key), then the pending inserts in insertion order; the
/// descriptor run over them as ``PredicateEvaluator`` specifies.
func referenceFetch(
    _ descriptor: Snapshot.FetchDescriptor, stored: [DefaultSnapshot], updated: [PersistentIdentifier: DefaultSnapshot],
    deleted: Set<PersistentIdentifier>, inserted: [DefaultSnapshot], schema: Schema
) throws -> [DefaultSnapshot] {
    var objects = stored.filter { !deleted.contains($0.persistentIdentifier) }.map { updated[$0.persistentIdentifier] ?? $0 }
    objects.sort { $0.persistentIdentifier.primaryKey < $1.persistentIdentifier.primaryKey }
    objects += inserted
    var all: [PersistentIdentifier: DefaultSnapshot] = [:]
    for o in objects { all[o.persistentIdentifier] = o }
    return try PredicateEvaluator(schema: schema) { all[$0] }.run(descriptor, over: objects)
}
