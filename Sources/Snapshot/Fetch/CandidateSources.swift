import Engine
import Foundation

/// A candidate source that reads every record of a root, in record key order: one scan of the
/// root's `R` prefix, each record's bytes lent to the filter in place.
struct RootScan {
    let mapper: RecordMapper

    /// Hands each record of the filter's root to `filter`, and each candidate it selects to
    /// `take` (which returns whether to stop); returns how many records the root holds, or `nil`
    /// when `take` stopped the scan.
    func run(_ filter: RecordFilter, take: (RecordFilter.Candidate) throws -> Bool) throws -> Int? {
        let root = filter.root
        let prefix = RecordKeys.recordPrefix(root: root)
        let keyLength = prefix.count + 16
        var rootCount = 0
        var cursor = try mapper.records.scan(prefix: prefix)
        while true {
            let step = try cursor.withNext { key, entry throws(EngineError) -> Step in
                guard key.count == keyLength else { return .failed(RecordDecodingError("a record key of the wrong length", key: Array(key))) }
                let pk = RecordKeys.uuid(from: UnsafeRawBufferPointer(rebasing: key[(keyLength - 16)...]))
                return try entry.withValue { bytes throws(EngineError) -> Step in
                    do {
                        return .found(try filter.candidate(bytes, key: key, primaryKey: pk))
                    } catch let error as EngineError {
                        throw error
                    } catch {
                        return .failed(error)
                    }
                }
            }
            guard let step else { break }
            rootCount += 1
            mapper.countRecordRead()
            switch step {
            case .failed(let error): throw error
            case .found(nil): continue
            case .found(let candidate?): if try take(candidate) { return nil }
            }
        }
        return rootCount
    }

    /// What one record of the scan came to.
    private enum Step {
        case found(RecordFilter.Candidate?)
        case failed(any Error)
    }
}

/// A candidate source that walks the index ranges a ``FetchPlan`` chose: each entry names an
/// object whose record is read in place (one point read) and handed to the filter; a walk for
/// a top-k sort stops once the window is full and an entry's value is past its last.
struct IndexWalk {
    let plan: FetchPlan
    let mapper: RecordMapper

    /// Hands each object the plan's ranges name to `filter`, and each candidate it selects to
    /// `take` (found in index order: its result does not stop the walk).
    func run(_ filter: RecordFilter, take: (RecordFilter.Candidate) throws -> Bool) throws {
        let root = filter.root
        // Index entries name the object's concrete entity: read only when the root has
        // sub-entities to tell apart.
        let rootOnly = filter.plans.count == 1
        if rootOnly && !filter.plans[0].selected { return }
        var boundary: PropertyValue?
        var boundaryKey: [UInt8]?
        var found = 0
        // One record key, its primary key replaced for each entry.
        var recordKey = RecordKeys.record(root: root, primaryKey: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        let pkStart = recordKey.count - 16
        for range in plan.reverse ? plan.ranges.reversed() : plan.ranges {
            var cursor = try mapper.records.scan(range, reverse: plan.reverse)
            while true {
                let stopAt = boundaryKey
                // The entry's primary key, when it names an object of an entity the fetch selects.
                let step = try cursor.withNext { key, entry throws(EngineError) -> Step in
                    // Past the window's last value (read from the key, not the record): done.
                    if let stopAt, !key.starts(with: stopAt) { return .stop }
                    guard key.count > 16 else { return .failed(RecordDecodingError("a malformed index entry", key: Array(key))) }
                    if !rootOnly {
                        let selected = try entry.withValue { name in filter.plan(named: name).map { filter.plans[$0].selected } }
                        guard selected == true else { return .skip }
                    }
                    return .object(RecordKeys.uuid(from: UnsafeRawBufferPointer(rebasing: key[(key.count - 16)...])))
                }
                guard let step else { break }
                let pk: UUID
                switch step {
                case .stop: return
                case .skip: continue
                case .failed(let error): throw error
                case .object(let object): pk = object
                }
                withUnsafeBytes(of: pk.uuid) { source in
                    recordKey.withUnsafeMutableBytes { $0.baseAddress!.advanced(by: pkStart).copyMemory(from: source.baseAddress!, byteCount: 16) }
                }
                let outcome = try mapper.records.withValue(forKey: recordKey) { bytes in
                    try recordKey.withUnsafeBytes { key in try filter.candidate(bytes, key: key, primaryKey: pk) }
                }
                guard let outcome else { throw RecordDecodingError("an index entry of a record that is missing", key: recordKey) }
                mapper.countRecordRead()
                guard let candidate = outcome else { continue }
                if let topK = plan.topK {
                    let value = candidate.sortValues[0]
                    if let boundary, PredicateEvaluator.compareKeys([value], [boundary], [topK.sort]) != 0 { return }
                    _ = try take(candidate)
                    found += 1
                    if boundary == nil && found == topK.needed {
                        boundary = value
                        // -0.0 and 0.0 tie with two encodings: compare those by reading records.
                        if !Self.isFloatingZero(value) { boundaryKey = plan.prefix + OrderedValueEncoding.encoded([value]) }
                    }
                } else {
                    // Found in index order, not the fetch's: the window takes every match.
                    _ = try take(candidate)
                }
            }
        }
    }

    /// Whether `value` is a floating-point zero (-0.0 and 0.0 tie but encode apart).
    private static func isFloatingZero(_ value: PropertyValue) -> Bool {
        switch value {
        case .double(let d): d == 0
        case .float(let f): f == 0
        case .decimal(let d): d.isZero
        default: false
        }
    }

    /// What one index entry came to.
    private enum Step {
        case object(UUID)
        case skip
        case stop
        case failed(any Error)
    }
}
