import Snapshot

extension ModelContext {
    /// Keeps the other side of every relationship held as model references on both sides in
    /// step, as SwiftData does: setting `attachment.post = post` adds the attachment to
    /// `post.attachments` (and takes it out of its former post's), appending a tag to
    /// `post.tags` adds the post to `tag.posts`, and the reverse. Runs over every registered
    /// object until nothing more changes.
    func maintainInverses() throws {
        for _ in 0..<4 {
            var adjusted = false
            for (id, object) in objects.registeredObjects {
                let known = storeContext.registeredSnapshot(for: id)
                if try maintainInverses(of: object, from: known) { adjusted = true }
            }
            if !adjusted { return }
        }
    }

    /// Puts `object` on the other side of each of its relationships whose targets differ from
    /// `known` (everything, for an object not known yet). Returns whether it changed anything.
    func maintainInverses<Model: PersistentModel>(of object: Model, from known: DefaultSnapshot?) throws -> Bool {
        var adjusted = false
        let id = object.persistentModelID
        for property in Model.properties {
            guard case .relationship(let relationship) = property.kind, let inverseName = relationship.inverse,
                let destination = property.destinationModel
            else { continue }
            let now = Set(property.read(object).referencedIdentifiers)
            let before = Set(known?[property.name]?.referencedIdentifiers ?? [])
            for target in now.subtracting(before) {
                if try link(id, into: target, as: destination, inverse: inverseName, adding: true) { adjusted = true }
            }
            for target in before.subtracting(now) {
                if try link(id, into: target, as: destination, inverse: inverseName, adding: false) { adjusted = true }
            }
        }
        return adjusted
    }

    /// Adds `source` to (or removes it from) the relationship `inverse` of the registered
    /// object `target`. Returns whether it changed anything.
    private func link<Destination: PersistentModel>(
        _ source: PersistentIdentifier, into target: PersistentIdentifier, as type: Destination.Type, inverse: String, adding: Bool
    ) throws -> Bool {
        guard objects.isRegistered(target) || storeContext.registeredSnapshot(for: target) != nil,
            var object = try? objects.model(Destination.self, for: target),
            let property = Destination.properties.first(where: { $0.name == inverse }), case .relationship(let relationship) = property.kind
        else { return false }
        let current = property.read(object)
        let next: PropertyValue
        switch (relationship.cardinality, adding) {
        case (.toMany, true):
            let ids = current.referencedIdentifiers
            if ids.contains(source) { return false }
            next = .toMany(ids + [source])
        case (.toMany, false):
            let ids = current.referencedIdentifiers
            if !ids.contains(source) { return false }
            next = .toMany(ids.filter { $0 != source })
        case (.toOne, true):
            if current.referencedIdentifiers == [source] { return false }
            next = .toOne(source)
        case (.toOne, false):
            if current.referencedIdentifiers != [source] { return false }
            next = .toOne(nil)
        }
        try property.write(&object, next, objects)
        return true
    }
}
