import Engine
import EngineTestSupport
import Foundation
import Models
import Snapshot
import SnapshotTestSupport
import Testing

/// Random inserts, updates, deletes, fetches, saves, rollbacks and reopenings through a
/// context over two stores (`Cloud` posts, `Shared` notes), against an in-memory reference.
@Suite struct ContextModelBasedTests {
    static let epoch = Date(timeIntervalSinceReferenceDate: 700_000_000)

    /// The reference: saved objects, and the pending changes since the last save.
    struct Reference {
        var saved: [PersistentIdentifier: DefaultSnapshot] = [:]
        var updated: [PersistentIdentifier: DefaultSnapshot] = [:]
        var deleted: Set<PersistentIdentifier> = []
        var inserted: [DefaultSnapshot] = []

        func live(_ entity: String) -> [PersistentIdentifier] {
            (saved.keys.filter { !deleted.contains($0) } + inserted.map(\.persistentIdentifier)).filter { $0.entityName == entity }.sorted()
        }

        func current(_ id: PersistentIdentifier) -> DefaultSnapshot? {
            inserted.first { $0.persistentIdentifier == id } ?? updated[id] ?? saved[id]
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func randomContextOperationsMatchTheReference(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        let home = ContainerHome()
        defer { home.temporary.remove() }
        var container = try home.open()
        var context = StoreContext(container)
        var reference = Reference()
        let titles = ["alpha", "beta", "gamma", "delta"]
        func title() -> String { "\(titles.randomElement(using: &rng)!) \(Int.random(in: 0..<10, using: &rng))" }
        func date() -> Date { Self.epoch.addingTimeInterval(Double(Int.random(in: 0..<50, using: &rng))) }

        for step in 0..<250 {
            let entity = Bool.random(using: &rng) ? "Post" : "Note"
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<30:
                var s = entity == "Post" ? BlogModel.post(title: title(), date: date()) : ContainerModel.note(title())
                try context.insert(s)
                s = try #require(context.registeredSnapshot(for: s.persistentIdentifier))
                reference.inserted.append(s)
            case 30..<50:
                guard let id = reference.live(entity).randomElement(using: &rng) else { continue }
                let values: [String: PropertyValue] =
                    entity == "Post" ? ["title": .string(title()), "date": .date(date())] : ["body": .string(title())]
                try context.update(id, values)
                if let i = reference.inserted.firstIndex(where: { $0.persistentIdentifier == id }) {
                    reference.inserted[i].values.merge(values) { _, n in n }
                } else {
                    var s = reference.current(id)!
                    s.values.merge(values) { _, n in n }
                    reference.updated[id] = s
                }
            case 50..<60:
                guard let id = reference.live(entity).randomElement(using: &rng) else { continue }
                try context.delete(id)
                if let i = reference.inserted.firstIndex(where: { $0.persistentIdentifier == id }) {
                    reference.inserted.remove(at: i)
                } else {
                    reference.deleted.insert(id)
                    reference.updated[id] = nil
                }
            case 60..<85:
                let predicate: FetchPredicate? = [
                    nil, .attribute("title").beginsWith(titles.randomElement(using: &rng)!), .attribute("title") >= "c",
                ]
                .randomElement(using: &rng)!
                let sort: [FetchSortDescriptor] = [[], [.init("title")], [.init("title", order: .reverse)]].randomElement(using: &rng)!
                let descriptor = Snapshot.FetchDescriptor(
                    entityName: entity == "Post" ? "Post" : "Item", predicate: predicate, sortBy: sort,
                    fetchLimit: [nil, 1, 3, 10].randomElement(using: &rng)!, fetchOffset: [nil, 0, 2].randomElement(using: &rng)!)
                let expected = try referenceFetch(
                    descriptor, stored: Array(reference.saved.values), updated: reference.updated, deleted: reference.deleted,
                    inserted: reference.inserted, schema: container.schema)
                let got = try context.fetch(descriptor)
                // Ties of the sort key are in the store's order; compare the sort keys and the
                // set of objects when the order of ties could differ.
                #expect(got.map { $0["title"] } == expected.map { $0["title"] }, "step \(step): \(descriptor)")
                if descriptor.fetchLimit == nil && descriptor.fetchOffset == nil {
                    #expect(Set(got) == Set(expected), "step \(step): \(descriptor)")
                }
                #expect(got.count == expected.count, "step \(step)")
            case 85..<93:
                let map = try context.save()
                for s in reference.inserted {
                    let permanent = try #require(map[s.persistentIdentifier])
                    reference.saved[permanent] = s.copy(persistentIdentifier: permanent)
                }
                for (id, s) in reference.updated { reference.saved[id] = s }
                for id in reference.deleted { reference.saved[id] = nil }
                reference = Reference(saved: reference.saved)
                #expect(!context.hasChanges)
            case 93..<97:
                context.rollback()
                reference = Reference(saved: reference.saved)
            default:
                // Reopen: what was saved survives, what was pending is gone.
                try container.close()
                container = try home.open()
                context = StoreContext(container)
                reference = Reference(saved: reference.saved)
            }
            #expect(context.hasChanges == !(reference.inserted.isEmpty && reference.updated.isEmpty && reference.deleted.isEmpty))
        }
        // The stores hold exactly what the reference saved.
        context.rollback()
        for entity in ["Post", "Item"] {
            let stored = try container.fetch(Snapshot.FetchDescriptor(entityName: entity)).fetchedSnapshots
            let expected = reference.saved.values.filter {
                entity == "Post" ? $0.persistentIdentifier.entityName == "Post" : $0.persistentIdentifier.entityName == "Note"
            }
            #expect(Set(stored) == Set(expected), "\(entity)")
        }
    }
}
