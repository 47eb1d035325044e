extension FetchPredicate {
    /// The properties this predicate reads on the object it is evaluated on: the first
    /// component of each path it tests (a path through a relationship reads that
    /// relationship). Identifier sets, constants and entity tests read none.
    package var propertiesRead: Set<String> {
        var names: Set<String> = []
        collectProperties(into: &names)
        return names
    }

    private func collectProperties(into names: inout Set<String>) {
        switch self {
        case .constant, .identifierIn, .entity:
            break
        case let .compare(path, _, _), let .string(path, _, _, _), let .isNull(path), let .oneOf(path, _), let .any(path, _), let .all(path, _):
            if let first = path.components.first { names.insert(first) }
        case .and(let list), .or(let list):
            for p in list { p.collectProperties(into: &names) }
        case .not(let p):
            p.collectProperties(into: &names)
        }
    }
}
