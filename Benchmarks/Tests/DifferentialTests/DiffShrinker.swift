import Foundation
import Snapshot

/// Delta debugging of a failing program: drops runs of steps, then single items of saves, then
/// single properties of updates, keeping each removal after which the program still disagrees
/// the same way (the same ``Disagreement/signature``), until nothing more can go or the time is
/// up.
struct DiffShrinker {
    /// Runs a candidate program; the disagreement it ends in, if any.
    var replay: ([Step]) throws -> Disagreement?
    /// When to stop shrinking (what is left is still a reproduction, just not minimal).
    var deadline: Date

    /// Candidate programs tried so far.
    private(set) var trials = 0

    init(deadline: Date, replay: @escaping ([Step]) throws -> Disagreement? = { try DiffRun.replay($0) }) {
        self.deadline = deadline
        self.replay = replay
    }

    /// The disagreement `steps` end in, when it has `signature`; the program is cut after it.
    private mutating func reproduces(_ steps: [Step], _ signature: String) -> (steps: [Step], disagreement: Disagreement)? {
        trials += 1
        guard let disagreement = try? replay(steps), disagreement.signature == signature else { return nil }
        return (Array(steps.prefix(disagreement.stepIndex + 1)), disagreement)
    }

    /// A smaller program that ends in a disagreement with `failure`'s signature, and that
    /// disagreement.
    mutating func shrink(_ steps: [Step], failure: Disagreement) -> (steps: [Step], disagreement: Disagreement) {
        var best = (steps: Array(steps.prefix(failure.stepIndex + 1)), disagreement: failure)
        let signature = failure.signature
        while Date() < deadline {
            // Runs of steps, halving the run length down to one step.
            var chunk = max(1, best.steps.count / 2)
            while chunk >= 1 && Date() < deadline {
                var start = 0
                while start < best.steps.count && Date() < deadline {
                    var candidate = best.steps
                    candidate.removeSubrange(start..<min(start + chunk, candidate.count))
                    if let found = reproduces(candidate, signature) { best = found } else { start += chunk }
                }
                chunk /= 2
            }
            // Then the first single object of a save, or property of an update, that can go;
            // after one goes, everything is tried again.
            guard let found = smallerSave(best.steps, signature) else { break }
            best = found
        }
        // Names of objects the program no longer inserts are dropped when it replays: the
        // listing drops them too, if it still disagrees the same way without them.
        if let found = reproduces(Self.withoutUnmadeObjects(best.steps), signature) { best = found }
        return best
    }

    /// `steps` without references to, updates of or deletes of objects no earlier save (or
    /// the same one) inserts.
    static func withoutUnmadeObjects(_ steps: [Step]) -> [Step] {
        var made: Set<PersistentIdentifier> = []
        func keep(_ values: [String: PropertyValue]) -> [String: PropertyValue] {
            values.mapValues { value in
                switch value {
                case .toOne(let id?) where !made.contains(id): .toOne(nil)
                case .toMany(let ids): .toMany(ids.filter(made.contains))
                default: value
                }
            }
        }
        func keep(_ predicate: FetchPredicate) -> FetchPredicate {
            switch predicate {
            case .identifierIn(let ids): .identifierIn(ids.filter(made.contains))
            case .and(let parts): .and(parts.map(keep))
            case .or(let parts): .or(parts.map(keep))
            case .not(let inner): .not(keep(inner))
            case let .any(path, inner): .any(path: path, keep(inner))
            case let .all(path, inner): .all(path: path, keep(inner))
            default: predicate
            }
        }
        return steps.compactMap { step in
            switch step {
            case .save(var save):
                made.formUnion(save.inserted.map(\.persistentIdentifier))
                save.inserted = save.inserted.map { DefaultSnapshot(persistentIdentifier: $0.persistentIdentifier, values: keep($0.values)) }
                save.updated = save.updated.filter { made.contains($0.id) }.map { SaveStep.Change(id: $0.id, values: keep($0.values)) }
                save.deleted = save.deleted.filter(made.contains)
                return save.itemCount == 0 ? nil : .save(save)
            case .fetch(var fetch):
                fetch.descriptor.predicate = fetch.descriptor.predicate.map(keep)
                return .fetch(fetch)
            case let .batchDelete(entity, predicate):
                return .batchDelete(entity: entity, predicate: predicate.map(keep))
            case .reopen:
                return step
            }
        }
    }

    private mutating func smallerSave(_ steps: [Step], _ signature: String) -> (steps: [Step], disagreement: Disagreement)? {
        for i in steps.indices.reversed() where Date() < deadline {
            guard case .save(let save) = steps[i] else { continue }
            var candidates: [SaveStep] = (0..<save.itemCount).reversed().map { save.removing(item: $0) }.filter { $0.itemCount > 0 }
            for u in save.updated.indices where save.updated[u].values.count > 1 {
                for name in save.updated[u].values.keys.sorted() {
                    var smaller = save
                    smaller.updated[u].values[name] = nil
                    candidates.append(smaller)
                }
            }
            for smaller in candidates where Date() < deadline {
                var candidate = steps
                candidate[i] = .save(smaller)
                if let found = reproduces(candidate, signature) { return found }
            }
        }
        return nil
    }
}
