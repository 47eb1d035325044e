import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A ``FetchPredicate`` compiled for the records (format 2) of one concrete entity: it answers
/// on a record's bytes, through ``RecordReader`` (each field's serial type and body found from
/// the header alone), what ``PredicateEvaluator`` answers on the object's snapshot — or says it
/// cannot, and the caller decodes the snapshot and evaluates that.
///
/// On the bytes: comparisons, `isNull`, `oneOf` and string operations on the object's own
/// stored fields, entity tests (known from the entity it was compiled for), identifier sets,
/// and their `and`, `or` and `not`. A field's value is decoded alone (no other field is), and a
/// string is not decoded at all when the bytes decide exactly: a comparison when the stored
/// text is ASCII (ASCII is its own NFC form, and strings compare by the bytes of their NFC
/// forms); a string operation when the text and the needle are ASCII without `\r` (so every
/// byte is one `Character`), folding ASCII letters for `caseInsensitive` (ASCII has no
/// diacritics to fold). Anything else — a path through a relationship, `any`/`all`, a value
/// held in an asset, text that is not ASCII — is left undecided, and the first undecided part
/// an evaluation in order would reach leaves the whole predicate undecided, so that errors the
/// snapshot path throws are thrown the same.
package struct RecordMatcher {
    indirect enum Node {
        case constant(Bool)
        /// Needs the snapshot.
        case undecided
        case field(RecordField, Test)
        case identifiers(Set<UUID>)
        case and([Node])
        case or([Node])
        case not(Node)
    }

    /// What is tested on one field's value.
    enum Test {
        case compare(FetchPredicate.Comparison, PropertyValue, text: [UInt8]?)
        case isNull
        /// The values, and the NFC bytes of those that are strings.
        case oneOf([PropertyValue], texts: [[UInt8]?])
        case string(FetchPredicate.StringOperation, needle: String, options: FetchPredicate.StringOptions, ascii: [UInt8]?)
    }

    let root: Node
    let entity: String
    let storeIdentifier: String

    /// `predicate` compiled for records of the concrete entity `entity`.
    init(_ predicate: FetchPredicate, entity: String, fields: RecordFieldList, evaluator: PredicateEvaluator, storeIdentifier: String) {
        self.storeIdentifier = storeIdentifier
        self.entity = entity
        root = Self.compile(predicate, entity: entity, fields: fields, evaluator: evaluator, storeIdentifier: storeIdentifier)
    }

    private static func compile(
        _ predicate: FetchPredicate, entity: String, fields: RecordFieldList, evaluator: PredicateEvaluator, storeIdentifier: String
    ) -> Node {
        func field(_ path: PropertyPath) -> RecordField? {
            guard path.components.count == 1, let f = fields.field(named: path.components[0]) else { return nil }
            return f
        }
        func recurse(_ p: FetchPredicate) -> Node {
            compile(p, entity: entity, fields: fields, evaluator: evaluator, storeIdentifier: storeIdentifier)
        }
        switch predicate {
        case .constant(let value):
            return .constant(value)
        case let .compare(path, comparison, value):
            guard let f = field(path) else { return .undecided }
            return .field(f, .compare(comparison, value, text: Self.text(value)))
        case .isNull(let path):
            guard let f = field(path) else { return .undecided }
            return .field(f, .isNull)
        case let .oneOf(path, values):
            guard let f = field(path) else { return .undecided }
            return .field(f, .oneOf(values, texts: values.map(Self.text)))
        case let .string(path, operation, needle, options):
            guard let f = field(path) else { return .undecided }
            let bytes = Array(needle.utf8)
            // Decided on the bytes only for ASCII without `\r`, and options that fold nothing
            // ASCII has beyond case.
            let foldsOnlyCase = options.subtracting([.caseInsensitive, .diacriticInsensitive]).isEmpty
            let ascii = foldsOnlyCase && bytes.allSatisfy { $0 < 0x80 && $0 != 0x0D } ? bytes : nil
            return .field(f, .string(operation, needle: needle, options: options, ascii: ascii))
        case .identifierIn(let ids):
            return .identifiers(
                Set(
                    ids.compactMap { id in
                        id.storeIdentifier == storeIdentifier && id.entityName == entity ? RecordMapper.primaryKey(of: id) : nil
                    }))
        case .and(let list):
            return .and(list.map(recurse))
        case .or(let list):
            return .or(list.map(recurse))
        case .not(let p):
            return .not(recurse(p))
        case .any, .all:
            return .undecided
        case let .entity(name, includesSubentities):
            guard let holds = try? evaluator.isOfEntity(entity, name, includesSubentities: includesSubentities) else { return .undecided }
            return .constant(holds)
        }
    }

    /// The NFC bytes of a string constant.
    private static func text(_ value: PropertyValue) -> [UInt8]? {
        if case .string(let s) = value { return CanonicalStringOrder.normalizedUTF8(s) }
        return nil
    }

    /// Whether the record (of the entity compiled for, primary key `primaryKey`) satisfies the
    /// predicate; `nil` when only its snapshot can tell.
    ///
    /// - Throws: ``RecordDecodingError`` for a field that does not decode, and what
    ///   ``PredicateEvaluator`` throws for the values it decodes (a type mismatch).
    func matches(_ record: RecordView, primaryKey: UUID) throws -> Bool? {
        try evaluate(root, record, primaryKey)
    }

    private func evaluate(_ node: Node, _ record: RecordView, _ pk: UUID) throws -> Bool? {
        switch node {
        case .constant(let value): return value
        case .undecided: return nil
        case .identifiers(let pks): return pks.contains(pk)
        case .and(let list):
            for n in list {
                guard let v = try evaluate(n, record, pk) else { return nil }
                if !v { return false }
            }
            return true
        case .or(let list):
            for n in list {
                guard let v = try evaluate(n, record, pk) else { return nil }
                if v { return true }
            }
            return false
        case .not(let n):
            return try evaluate(n, record, pk).map { !$0 }
        case let .field(field, test):
            return try evaluate(test, field, record)
        }
    }

    private func evaluate(_ test: Test, _ field: RecordField, _ record: RecordView) throws -> Bool? {
        let i = field.index
        if record.isAsset(i) { return nil }
        // Text held inline, when the bytes are ASCII: decided on the bytes in place, without
        // decoding the string.
        if case .attribute(let a) = field.kind, a.valueType == .string, i < record.fieldCount, RecordSerialType.isText(record.serialType(i)),
            let decided = Self.decideOnASCII(test, record.body(i))
        {
            return decided
        }
        let path = PropertyPath(components: [field.name])
        switch test {
        case let .compare(comparison, constant, _):
            return try PredicateEvaluator.holds(try value(field, record), comparison, constant, path: path, entityName: entity)
        case .isNull:
            return try value(field, record).isNull
        case let .oneOf(values, _):
            let v = try value(field, record)
            for constant in values where try PredicateEvaluator.holds(v, .equal, constant, path: path, entityName: entity) { return true }
            return false
        case let .string(operation, needle, options, _):
            let v = try value(field, record)
            if v.isNull { return false }
            guard case .string(let s) = v else { return nil }
            return PredicateEvaluator.matches(s, operation, needle, options)
        }
    }

    /// What `test` answers on the text `body` when its bytes decide it exactly (ASCII, and for
    /// a string operation no `\r` and only case and diacritic options); `nil` otherwise.
    private static func decideOnASCII(_ test: Test, _ body: UnsafeRawBufferPointer) -> Bool? {
        guard isASCII(body) else { return nil }
        switch test {
        case let .compare(comparison, _, text?):
            return holds(order(body, text), comparison)
        case let .oneOf(_, texts):
            var found = false
            var i = 0
            while i < texts.count {
                guard let text = texts[i] else { return nil }
                if order(body, text) == 0 { found = true }
                i += 1
            }
            return found
        case let .string(operation, _, options, asciiNeedle?):
            guard body.isEmpty || memchr(body.baseAddress!, 0x0D, body.count) == nil else { return nil }
            return matches(body, operation, asciiNeedle, foldingCase: options.contains(.caseInsensitive))
        default:
            return nil
        }
    }

    private static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        let count = bytes.count
        // Eight bytes at a time, then the rest.
        while i + 8 <= count {
            if bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            i += 8
        }
        while i < count {
            if bytes[i] >= 0x80 { return false }
            i += 1
        }
        return true
    }

    private func value(_ field: RecordField, _ record: RecordView) throws -> PropertyValue {
        try record.value(of: field, storeIdentifier: storeIdentifier)
    }

    /// -1, 0 or 1 as `a` sorts before, with or after `b`, byte by byte (a prefix first).
    private static func order(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Int {
        b.withUnsafeBytes { b in
            let shared = min(a.count, b.count)
            let c = shared == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, shared)
            if c != 0 { return c < 0 ? -1 : 1 }
            return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
        }
    }

    private static func holds(_ order: Int, _ comparison: FetchPredicate.Comparison) -> Bool {
        switch comparison {
        case .equal: order == 0
        case .notEqual: order != 0
        case .less: order < 0
        case .lessOrEqual: order <= 0
        case .greater: order > 0
        case .greaterOrEqual: order >= 0
        }
    }

    /// The string rule on ASCII without `\r` (each byte one `Character`): a byte search over
    /// the record's bytes in place. When case counts, `memchr` finds each occurrence of the
    /// needle's first byte and `memcmp` compares the rest; else each byte is compared with the
    /// needle's first in both cases before the rest is compared folded.
    private static func matches(
        _ haystack: UnsafeRawBufferPointer, _ operation: FetchPredicate.StringOperation, _ needle: [UInt8], foldingCase: Bool
    ) -> Bool {
        if needle.isEmpty { return true }
        guard needle.count <= haystack.count else { return false }
        @inline(__always) func fold(_ b: UInt8) -> UInt8 { foldingCase && b >= 0x41 && b <= 0x5A ? b | 0x20 : b }
        let h = UnsafeBufferPointer(start: haystack.baseAddress?.assumingMemoryBound(to: UInt8.self), count: haystack.count)
        return needle.withUnsafeBufferPointer { n in
            guard let hBase = h.baseAddress, let nBase = n.baseAddress else { return false }
            let count = n.count
            @inline(__always) func equal(at start: Int) -> Bool {
                for j in 0..<count where fold(hBase[start + j]) != fold(nBase[j]) { return false }
                return true
            }
            switch operation {
            case .beginsWith: return equal(at: 0)
            case .endsWith: return equal(at: h.count - count)
            case .contains:
                let last = h.count - count
                if !foldingCase {
                    var start = 0
                    while start <= last {
                        guard let found = memchr(hBase + start, Int32(nBase[0]), last - start + 1) else { return false }
                        let at = hBase.distance(to: found.assumingMemoryBound(to: UInt8.self))
                        if memcmp(hBase + at, nBase, count) == 0 { return true }
                        start = at + 1
                    }
                    return false
                }
                let first = fold(nBase[0])
                // The first byte in both cases, when it is a letter.
                let other = first >= 0x61 && first <= 0x7A ? first & ~0x20 : first
                var start = 0
                while start <= last {
                    let b = hBase[start]
                    if (b == first || b == other) && equal(at: start) { return true }
                    start += 1
                }
                return false
            }
        }
    }
}
