import Snapshot

extension ModelProperty {
    /// This property as one of `Subclass`, a subclass model of `Model` that inherits it: the
    /// same name and declaration, read and written through the subclass's instances; `nil`
    /// when `Subclass` is not a subclass of `Model`.
    func inherited<Subclass: EntityModel>(by _: Subclass.Type) -> ModelProperty<Subclass>? {
        guard Subclass.self is Model.Type, let rebased = Subclass.keyPath(throughSuperclass: keyPath) else { return nil }
        let (read, write, relatedObjects) = (self.read, self.write, self.relatedObjects)
        let kind: ModelProperty<Subclass>.Kind =
            switch declaredKind {
            case .attribute(let attribute): .attribute(attribute)
            case .relationship(let relationship): .relationship(relationship)
            }
        return ModelProperty<Subclass>(
            name: name, keyPath: rebased, kind: kind, destinationModel: destinationModel, inverseName: inverseName,
            inheritedKeyPath: inheritedKeyPath ?? keyPath,
            read: { ($0 as? Model).map(read) ?? .null },
            write: { object, value, resolver in
                // A class instance: writing through the superclass's view changes the object.
                guard var base = object as? Model else { return }
                try write(&base, value, resolver)
            },
            relatedObjects: { ($0 as? Model).map(relatedObjects) ?? [] })
    }

    /// Whether `keyPath` stands for this property: it is this property's key path, or — for a
    /// property inherited from a superclass model — the same property reached from `Model`
    /// (`\Photo.title` for the `title` that `\Media.title` declares).
    func isDeclared(at keyPath: AnyKeyPath) -> Bool {
        if keyPath == self.keyPath { return true }
        guard let inheritedKeyPath, type(of: keyPath).rootType == Model.self, type(of: keyPath).valueType == type(of: inheritedKeyPath).valueType
        else { return keyPath == inheritedKeyPath }
        guard let components = Self.components(of: keyPath, from: type(of: keyPath).rootType),
            let inheritedComponents = Self.components(of: inheritedKeyPath, from: type(of: inheritedKeyPath).rootType)
        else { return false }
        return components == inheritedComponents
    }

    /// The components a key path's description shows after its root (`.title` of
    /// `\Photo.title`), when it shows them by name.
    private static func components(of keyPath: AnyKeyPath, from root: Any.Type) -> Substring? {
        let text = String(describing: keyPath)
        let prefix = "\\\(root)."
        guard text.hasPrefix(prefix), !text.contains("<") else { return nil }
        return text.dropFirst(prefix.count - 1)
    }
}

/// A key path held by a ``ModelProperty``. (`@unchecked Sendable`: a key path is an immutable
/// value once made, so sharing it between threads is safe; the standard library just does not
/// declare it `Sendable`.)
struct KeyPathBox<Root>: @unchecked Sendable {
    let keyPath: PartialKeyPath<Root>
}

/// A key path of any root, held as ``KeyPathBox`` holds one (`@unchecked Sendable` for the same
/// reason).
struct AnyKeyPathBox: @unchecked Sendable {
    let keyPath: AnyKeyPath
}

/// The marker of a key-path subscript that views a model object as its superclass `Ancestor`.
struct SuperclassView<Ancestor>: Hashable, Sendable {}

extension EntityModel {
    /// The object seen as its superclass `Ancestor`: the first component of a key path from a
    /// subclass model to a property its superclass declares. Only made by
    /// ``keyPath(throughSuperclass:)``, after checking that `Self` is a subclass of `Ancestor`.
    subscript<Ancestor>(superclassView _: SuperclassView<Ancestor>) -> Ancestor {
        // Never fails: the key path is made only for a subclass of `Ancestor`.
        self as! Ancestor
    }

    /// `keyPath`, of a superclass `Ancestor` of this model, as a key path from this model.
    static func keyPath<Ancestor>(throughSuperclass keyPath: PartialKeyPath<Ancestor>) -> PartialKeyPath<Self>? {
        guard Self.self is Ancestor.Type else { return nil }
        let view: KeyPath<Self, Ancestor> = \Self.[superclassView: SuperclassView<Ancestor>()]
        return (view as AnyKeyPath).appending(path: keyPath as AnyKeyPath) as? PartialKeyPath<Self>
    }
}
