import Snapshot

extension ModelContext {
    /// Keeps the other side of every relationship held as model references on both sides in
    /// step, as SwiftData does: setting `attachment.post = post` adds the attachment to
    /// `post.attachments` (and takes it out of its former post's), appending a tag to
    /// `post.tags` adds the post to `tag.posts`, and the reverse. Starts from the objects in
    /// `changed` and follows the objects it adjusts until nothing more changes.
    ///
    /// - Returns: the objects it adjusted.
    func maintainInverses(startingWith changed: [PersistentIdentifier: [String: PropertyValue]]) throws -> Set<PersistentIdentifier> {
        var adjusted: Set<PersistentIdentifier> = []
        var work = changed.filter { $0.value.values.contains(where: Self.isReference) }.map(\.key)
        var rounds = 0
        while let id = work.popLast(), rounds < 10_000 {
            rounds += 1
            guard let object = objects.registeredObject(for: id) else { continue }
            for target in try maintainInverses(of: object, from: storeContext.registeredSnapshot(for: id)) {
                adjusted.insert(target)
                work.append(target)
            }
        }
        return adjusted
    }

    private static func isReference(_ value: PropertyValue) -> Bool {
        switch value {
        case .toOne, .toMany: true
        default: false
        }
    }

    /// Puts `object` on the other side of each of its relationships whose targets differ from
    /// `known` (everything, for an object not known yet). Returns the objects it changed.
    func maintainInverses<Model: EntityModel>(of object: Model, from known: DefaultSnapshot?) throws -> [PersistentIdentifier] {
        var adjusted: [PersistentIdentifier] = []
        let id = object.persistentModelID
        for property in Model.modelProperties {
            guard case .relationship(let relationship) = property.kind, let inverseName = relationship.inverse,
                let destination = property.destinationModel
            else { continue }
            let now = Set(property.read(object).referencedIdentifiers)
            let before = Set(known?[property.name]?.referencedIdentifiers ?? [])
            for target in now.subtracting(before) {
                if try link(id, into: target, as: destination, inverse: inverseName, adding: true) { adjusted.append(target) }
            }
            for target in before.subtracting(now) {
                if try link(id, into: target, as: destination, inverse: inverseName, adding: false) { adjusted.append(target) }
            }
        }
        return adjusted
    }

    /// Adds `source` to (or removes it from) the relationship `inverse` of the registered
    /// object `target`. Returns whether it changed anything.
    private func link<Destination: EntityModel>(
        _ source: PersistentIdentifier, into target: PersistentIdentifier, as type: Destination.Type, inverse: String, adding: Bool
    ) throws -> Bool {
        guard objects.isRegistered(target) || storeContext.registeredSnapshot(for: target) != nil,
            var object = try? objects.model(Destination.self, for: target),
            let property = Destination.modelProperties.first(where: { $0.name == inverse }), case .relationship(let relationship) = property.kind
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
