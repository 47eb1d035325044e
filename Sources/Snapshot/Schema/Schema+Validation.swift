extension Schema {
    /// Every inconsistency of `entities`, in a fixed order: names, then inheritance, then each
    /// entity's properties, relationships, indexes and constraints in declaration order. Empty
    /// when `entities` make a schema.
    public static func inconsistencies(in entities: [Entity]) -> [Inconsistency] {
        var problems: [Inconsistency] = []
        var byName: [String: Entity] = [:]
        var originalNames: Set<String> = []
        for entity in entities {
            if !isIdentifier(entity.name) { problems.append(.invalidName(entity: entity.name, property: nil)) }
            if byName[entity.name] != nil { problems.append(.duplicateEntity(entity.name)) } else { byName[entity.name] = entity }
            if let original = entity.originalName, !isIdentifier(original) || !originalNames.insert(original).inserted {
                problems.append(.invalidOriginalName(entity: entity.name, property: nil))
            }
        }

        // Inheritance: every superentity known, no cycles. `chains[name]` is the entity and its
        // ancestors, root last, for the entities whose chain is sound.
        var chains: [String: [Entity]] = [:]
        for entity in entities where chains[entity.name] == nil {
            var chain = [entity]
            var seen: Set<String> = [entity.name]
            var sound = true
            while let superName = chain.last!.superentityName {
                guard let parent = byName[superName] else {
                    problems.append(.unknownSuperentity(entity: chain.last!.name, superentity: superName))
                    sound = false
                    break
                }
                guard seen.insert(superName).inserted else {
                    problems.append(.inheritanceCycle(entity: entity.name))
                    sound = false
                    break
                }
                chain.append(parent)
            }
            if sound { chains[entity.name] = chain }
        }

        /// Every property of a sound entity, inherited ones included.
        func properties(of name: String) -> [String: Property] {
            var result: [String: Property] = [:]
            for ancestor in (chains[name] ?? []).reversed() {
                for property in ancestor.declaredProperties where result[property.name] == nil { result[property.name] = property }
            }
            return result
        }
        func isSelfOrAncestor(_ candidate: String, of name: String) -> Bool {
            chains[name]?.contains { $0.name == candidate } ?? false
        }

        for entity in entities where chains[entity.name] != nil {
            // Names: identifiers, not reserved, not declared twice, not redeclaring an inherited one.
            var inherited: Set<String> = []
            for ancestor in chains[entity.name]!.dropFirst() { for p in ancestor.declaredProperties { inherited.insert(p.name) } }
            var declared: Set<String> = []
            var originals: Set<String> = []
            for property in entity.declaredProperties {
                let original: String? =
                    switch property {
                    case .attribute(let a): a.originalName
                    case .relationship(let r): r.originalName
                    }
                if let original, !isIdentifier(original) || !originals.insert(original).inserted {
                    problems.append(.invalidOriginalName(entity: entity.name, property: property.name))
                }
                if !isIdentifier(property.name) || property.name == "entityName" || property.name.hasSuffix("_ckAsset") {
                    problems.append(.invalidName(entity: entity.name, property: property.name))
                }
                if !declared.insert(property.name).inserted || inherited.contains(property.name) {
                    problems.append(.duplicateProperty(entity: entity.name, property: property.name))
                }
            }

            for attribute in entity.attributes {
                if let value = attribute.defaultValue {
                    let fits = value.isNull ? attribute.isOptional : attribute.valueType.accepts(value)
                    if !fits { problems.append(.defaultValueMismatch(entity: entity.name, attribute: attribute.name)) }
                }
                if attribute.options.contains(.externalStorage) {
                    switch attribute.valueType {
                    case .data, .string, .codable: break
                    default: problems.append(.invalidOption(entity: entity.name, attribute: attribute.name))
                    }
                }
            }

            for relationship in entity.relationships {
                let here = (entity: entity.name, relationship: relationship.name)
                let counts = [relationship.minimumCount, relationship.maximumCount].compactMap { $0 }
                if counts.contains(where: { $0 < 0 })
                    || (relationship.minimumCount ?? 0) > (relationship.maximumCount ?? Int.max)
                    || (!relationship.isToMany && counts.contains(where: { $0 > 1 }))
                {
                    problems.append(.invalidCount(entity: here.entity, relationship: here.relationship))
                }
                guard byName[relationship.destination] != nil else {
                    problems.append(.unknownDestination(entity: here.entity, relationship: here.relationship, destination: relationship.destination))
                    continue
                }
                guard let inverseName = relationship.inverse, chains[relationship.destination] != nil else { continue }
                guard case .relationship(let inverse)? = properties(of: relationship.destination)[inverseName] else {
                    problems.append(.unknownInverse(entity: here.entity, relationship: here.relationship, inverse: inverseName))
                    continue
                }
                if !isSelfOrAncestor(inverse.destination, of: entity.name) || (inverse.inverse.map { $0 != relationship.name } ?? false) {
                    problems.append(.inverseMismatch(entity: here.entity, relationship: here.relationship, inverse: inverseName))
                }
            }

            let all = properties(of: entity.name)
            for index in entity.indexes {
                if index.properties.isEmpty { problems.append(.emptyIndex(entity: entity.name)) }
                for name in index.properties {
                    switch all[name] {
                    case nil: problems.append(.unknownIndexedProperty(entity: entity.name, property: name))
                    case .relationship(let r)? where r.isToMany: problems.append(.toManyIndexedProperty(entity: entity.name, property: name))
                    default: break
                    }
                }
            }
            for constraint in entity.uniquenessConstraints {
                if constraint.properties.isEmpty { problems.append(.emptyConstraint(entity: entity.name)) }
                for name in constraint.properties {
                    switch all[name] {
                    case nil: problems.append(.unknownConstrainedProperty(entity: entity.name, property: name))
                    case .relationship(let r)? where r.isToMany: problems.append(.toManyConstrainedProperty(entity: entity.name, property: name))
                    default: break
                    }
                }
            }
        }
        return problems
    }

    /// A letter or `_`, then letters, digits or `_` (ASCII).
    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.utf8.first, first == UInt8(ascii: "_") || isLetter(first) else { return false }
        return name.utf8.allSatisfy { $0 == UInt8(ascii: "_") || isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }
}
