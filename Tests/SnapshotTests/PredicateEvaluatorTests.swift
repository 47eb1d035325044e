import EngineTestSupport
import Foundation
import Snapshot
import Testing

/// Every predicate operator against a reference written here over plain Swift values, on
/// random objects and random predicates from a seeded generator.
@Suite struct PredicateEvaluatorTests {
    /// An object as plain Swift values: what the reference reads.
    struct Ref {
        var n: Int?
        var x: Double?
        var s: String?
        var parent: Int?
        var children: [Int]
    }

    static let alphabet = ["a", "A", "á", "Á", "e", "é", "É", "b", " "]

    struct World {
        var refs: [Ref] = []
        var snapshots: [DefaultSnapshot] = []
        var ids: [PersistentIdentifier] = []

        func snapshot(_ id: PersistentIdentifier) -> DefaultSnapshot? { ids.firstIndex(of: id).map { snapshots[$0] } }
    }

    static func randomString(_ r: inout SeededGenerator, maxLength: Int) -> String {
        (0..<Int.random(in: 0...maxLength, using: &r)).map { _ in alphabet.randomElement(using: &r)! }.joined()
    }

    /// An integer in a random width (the evaluator must compare them all numerically).
    static func integerValue(_ n: Int, _ r: inout SeededGenerator) -> PropertyValue {
        switch Int.random(in: 0..<7, using: &r) {
        case 0: .int8(Int8(n))
        case 1: .int16(Int16(n))
        case 2: .int32(Int32(n))
        case 3: .int64(Int64(n))
        case 4 where n >= 0: .uint64(UInt64(n))
        case 5 where n >= 0: .uint8(UInt8(n))
        default: .int(n)
        }
    }

    static func world(_ r: inout SeededGenerator, count: Int) throws -> World {
        var w = World()
        w.ids = try (0..<count).map { _ in try PersistentIdentifier.identifier(for: "s", entityName: "Item", primaryKey: UUID()) }
        for i in 0..<count {
            let ref = Ref(
                n: Bool.random(using: &r) || i == 0 ? Int.random(in: -5...5, using: &r) : nil,
                x: Int.random(in: 0..<4, using: &r) == 0 ? nil : [-2.5, 0, 1.5, 3.25, .nan, 1].randomElement(using: &r)!,
                s: Int.random(in: 0..<5, using: &r) == 0 ? nil : randomString(&r, maxLength: 4),
                parent: Bool.random(using: &r) ? Int.random(in: 0..<count, using: &r) : nil,
                children: (0..<Int.random(in: 0...3, using: &r)).map { _ in Int.random(in: 0..<count, using: &r) })
            var values: [String: PropertyValue] = [
                "parent": .toOne(ref.parent.map { w.ids[$0] }), "children": .toMany(ref.children.map { w.ids[$0] }),
            ]
            // A missing value is sometimes absent, sometimes an explicit null.
            if let n = ref.n { values["n"] = integerValue(n, &r) } else if Bool.random(using: &r) { values["n"] = .null }
            if let x = ref.x { values["x"] = .double(x) } else if Bool.random(using: &r) { values["x"] = .null }
            if let s = ref.s { values["s"] = .string(s) } else if Bool.random(using: &r) { values["s"] = .null }
            w.refs.append(ref)
            w.snapshots.append(DefaultSnapshot(persistentIdentifier: w.ids[i], values: values))
        }
        return w
    }

    // MARK: The reference

    /// Numeric order with NaN equal to NaN and above every number.
    static func order(_ a: Double, _ b: Double) -> Int {
        if a.isNaN || b.isNaN { return a.isNaN == b.isNaN ? 0 : (a.isNaN ? 1 : -1) }
        return a < b ? -1 : (a == b ? 0 : 1)
    }

    static func order(_ a: String, _ b: String) -> Int { a < b ? -1 : (a == b ? 0 : 1) }

    /// `lhs op rhs` under the documented null rules, `order` given when neither is null.
    static func compare(_ lhsIsNull: Bool, _ rhsIsNull: Bool, _ op: FetchPredicate.Comparison, _ order: () -> Int) -> Bool {
        if lhsIsNull || rhsIsNull {
            switch op {
            case .equal: return lhsIsNull && rhsIsNull
            case .notEqual: return !(lhsIsNull && rhsIsNull)
            default: return false
            }
        }
        let c = order()
        switch op {
        case .equal: return c == 0
        case .notEqual: return c != 0
        case .less: return c < 0
        case .lessOrEqual: return c <= 0
        case .greater: return c > 0
        case .greaterOrEqual: return c >= 0
        }
    }

    /// Folding written independently of Foundation's: lowercase; strip combining marks.
    static func fold(_ s: String, _ options: FetchPredicate.StringOptions) -> String {
        var result = s
        if options.contains(.caseInsensitive) { result = result.lowercased() }
        if options.contains(.diacriticInsensitive) {
            let scalars = result.decomposedStringWithCanonicalMapping.unicodeScalars.filter { !(0x300...0x36F).contains($0.value) }
            result = String(String.UnicodeScalarView(scalars))
        }
        return result
    }

    static func stringMatches(_ s: String, _ op: FetchPredicate.StringOperation, _ needle: String, _ options: FetchPredicate.StringOptions) -> Bool {
        let (h, n) = (fold(s, options), fold(needle, options))
        if n.isEmpty { return true }
        switch op {
        case .beginsWith: return h.hasPrefix(n)
        case .endsWith: return h.hasSuffix(n)
        case .contains: return h.range(of: n) != nil
        }
    }

    // MARK: Random predicates, each with its reference

    typealias Pair = (FetchPredicate, (Int) -> Bool)

    static let comparisons: [FetchPredicate.Comparison] = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual]

    /// A numeric constant in a random case, and its value as a Double (nil for null).
    static func numericConstant(_ r: inout SeededGenerator) -> (PropertyValue, Double?) {
        let k = Int.random(in: -5...5, using: &r)
        switch Int.random(in: 0..<6, using: &r) {
        case 0: return (.double(Double(k) + 0.5), Double(k) + 0.5)
        case 1: return (.decimal(Decimal(k)), Double(k))
        case 2: return (.null, nil)
        case 3: return (.float(Float(k)), Double(k))
        default: return (integerValue(k, &r), Double(k))
        }
    }

    static func leaf(_ w: World, _ r: inout SeededGenerator) -> Pair {
        let refs = w.refs
        switch Int.random(in: 0..<10, using: &r) {
        case 0:
            let (constant, c) = numericConstant(&r)
            let op = comparisons.randomElement(using: &r)!
            return (
                .compare(path: "n", op, value: constant),
                { i in
                    compare(refs[i].n == nil, c == nil, op) { order(Double(refs[i].n!), c!) }
                }
            )
        case 1:
            let c = [-2.5, 0, 1.5, 2, .nan].randomElement(using: &r)!
            let op = comparisons.randomElement(using: &r)!
            return (.compare(path: "x", op, value: .double(c)), { i in compare(refs[i].x == nil, false, op) { order(refs[i].x!, c) } })
        case 2:
            let c = randomString(&r, maxLength: 2)
            let op = comparisons.randomElement(using: &r)!
            return (.compare(path: "s", op, value: .string(c)), { i in compare(refs[i].s == nil, false, op) { order(refs[i].s!, c) } })
        case 3:
            let op = [FetchPredicate.StringOperation.contains, .beginsWith, .endsWith].randomElement(using: &r)!
            let options = FetchPredicate.StringOptions(rawValue: UInt8.random(in: 0...3, using: &r))
            let needle = randomString(&r, maxLength: 2)
            return (
                .string(path: "s", op, needle: needle, options: options),
                { i in
                    refs[i].s.map { stringMatches($0, op, needle, options) } ?? false
                }
            )
        case 4:
            let which = Int.random(in: 0..<4, using: &r)
            let path: PropertyPath = ["n", "x", "s", "parent"][which]
            return (
                .isNull(path: path),
                { i in
                    [refs[i].n == nil, refs[i].x == nil, refs[i].s == nil, refs[i].parent == nil][which]
                }
            )
        case 5:
            let constants = (0..<Int.random(in: 0...3, using: &r)).map { _ in numericConstant(&r) }
            return (
                .oneOf(path: "n", values: constants.map(\.0)),
                { i in
                    constants.contains { constant in compare(refs[i].n == nil, constant.1 == nil, .equal) { order(Double(refs[i].n!), constant.1!) } }
                }
            )
        case 6:
            let chosen = Set(w.ids.indices.filter { _ in Bool.random(using: &r) })
            return (.identifierIn(Set(chosen.map { w.ids[$0] })), { i in chosen.contains(i) })
        case 7:
            let (constant, c) = numericConstant(&r)
            let op = comparisons.randomElement(using: &r)!
            return (
                .compare(path: "parent.n", op, value: constant),
                { i in
                    let n = refs[i].parent.flatMap { refs[$0].n }
                    return compare(n == nil, c == nil, op) { order(Double(n!), c!) }
                }
            )
        case 8:
            let op = [FetchPredicate.StringOperation.contains, .beginsWith].randomElement(using: &r)!
            let needle = randomString(&r, maxLength: 1)
            return (
                .string(path: "parent.parent.s", op, needle: needle, options: .caseInsensitive),
                { i in
                    let s = refs[i].parent.flatMap { refs[$0].parent }.flatMap { refs[$0].s }
                    return s.map { stringMatches($0, op, needle, .caseInsensitive) } ?? false
                }
            )
        default:
            let b = Bool.random(using: &r)
            return (.constant(b), { _ in b })
        }
    }

    static func predicate(_ w: World, _ r: inout SeededGenerator, depth: Int) -> Pair {
        if depth == 0 || Int.random(in: 0..<3, using: &r) == 0 { return leaf(w, &r) }
        let refs = w.refs
        switch Int.random(in: 0..<5, using: &r) {
        case 0:
            let parts = (0..<Int.random(in: 0...3, using: &r)).map { _ in predicate(w, &r, depth: depth - 1) }
            return (.and(parts.map(\.0)), { i in parts.allSatisfy { $0.1(i) } })
        case 1:
            let parts = (0..<Int.random(in: 0...3, using: &r)).map { _ in predicate(w, &r, depth: depth - 1) }
            return (.or(parts.map(\.0)), { i in parts.contains { $0.1(i) } })
        case 2:
            let (p, f) = predicate(w, &r, depth: depth - 1)
            return (.not(p), { i in !f(i) })
        case 3:
            let (p, f) = predicate(w, &r, depth: depth - 1)
            return (.any(path: "children", p), { i in refs[i].children.contains(where: f) })
        default:
            let (p, f) = predicate(w, &r, depth: depth - 1)
            let throughParent = Bool.random(using: &r)
            return (
                .all(path: throughParent ? "parent.children" : "children", p),
                { i in
                    guard let owner = throughParent ? refs[i].parent : i else { return true }
                    return refs[owner].children.allSatisfy(f)
                }
            )
        }
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64]) func randomPredicatesAgreeWithTheReference(seed: UInt64) throws {
        var r = SeededGenerator(seed: seed)
        let w = try Self.world(&r, count: 30)
        let evaluator = PredicateEvaluator { w.snapshot($0) }
        var held = 0
        for _ in 0..<300 {
            let (p, reference) = Self.predicate(w, &r, depth: 3)
            // The tree survives Codable unchanged.
            #expect(try JSONDecoder().decode(FetchPredicate.self, from: JSONEncoder().encode(p)) == p)
            for i in w.snapshots.indices {
                let got = try evaluator.evaluate(p, on: w.snapshots[i])
                if got != reference(i) {
                    Issue.record("\(p) on object \(i) \(w.refs[i]) gave \(got), the reference \(reference(i))")
                    return
                }
                if got { held += 1 }
            }
        }
        #expect(held > 1000 && held < 8000, "the random predicates must both hold and fail often (held \(held) of 9000)")
    }

    /// Each operator at least once on hand-picked values, so a broken one fails by name.
    @Test func eachOperatorOnKnownValues() throws {
        let id = try PersistentIdentifier.identifier(for: "s", entityName: "Item", primaryKey: "1")
        let s = DefaultSnapshot(persistentIdentifier: id, values: ["n": .int8(3), "t": "Café Swift", "d": .date(Date(timeIntervalSince1970: 10))])
        let e = PredicateEvaluator { _ in nil }
        let holds: [FetchPredicate] = [
            .attribute("n") == UInt64(3), .attribute("n") != 4, .attribute("n") < 3.5, .attribute("n") <= Decimal(3),
            .attribute("n") > Float(2.9), .attribute("n") >= Int64(3),
            .attribute("t").contains("swift", options: .caseInsensitive),
            .attribute("t").beginsWith("cafe", options: [.caseInsensitive, .diacriticInsensitive]),
            .attribute("t").endsWith("Swift"), .attribute("missing").isNil, .attribute("n").isNotNil, .attribute("n").isIn([1, 3]),
            .identifier(in: [id]), .attribute("d") > Date(timeIntervalSince1970: 5), .attribute("missing") == PropertyValue.null,
            .attribute("missing") != 1, !(.attribute("missing") < 1), .always, !.never,
        ]
        for p in holds { #expect(try e.evaluate(p, on: s), "\(p)") }
        let fails: [FetchPredicate] = [
            .attribute("t").contains("swift"), .attribute("t").beginsWith("cafe", options: .caseInsensitive),
            .attribute("n").isIn([PropertyValue]()), .attribute("missing") >= 0, .attribute("n") == PropertyValue.null,
        ]
        for p in fails { #expect(try !e.evaluate(p, on: s), "\(p)") }
    }

    @Test func badPredicatesAreTypedErrors() throws {
        let child = try PersistentIdentifier.identifier(for: "s", entityName: "Item", primaryKey: "child")
        let gone = try PersistentIdentifier.identifier(for: "s", entityName: "Item", primaryKey: "gone")
        let s = DefaultSnapshot(
            persistentIdentifier: try .identifier(for: "s", entityName: "Item", primaryKey: "1"),
            values: ["t": "x", "kids": .toMany([child]), "lost": .toOne(gone)])
        let e = PredicateEvaluator { $0 == child ? DefaultSnapshot(persistentIdentifier: child) : nil }
        let cases: [(FetchPredicate, DataStoreError.Code)] = [
            (.attribute("t") > 3, .typeMismatch),
            (.attribute("t").isIn([Date()]), .typeMismatch),
            (.compare(path: "kids", .equal, value: 1), .typeMismatch),
            (.attribute("kids.t") == "x", .invalidPredicate),
            (.attribute("t.length") == 1, .invalidPredicate),
            (.attribute("post..title") == "x", .invalidPredicate),
            (.attribute("") == "x", .invalidPredicate),
            (.attribute("lost.t") == "x", .danglingReference),
            (.relationship("t").any(.always), .invalidPredicate),
        ]
        for (p, code) in cases {
            do {
                _ = try e.evaluate(p, on: s)
                Issue.record("\(p) must throw \(code)")
            } catch let error as DataStoreError {
                #expect(error.code == code, "\(p): \(error)")
            }
        }
        // With a schema, unknown names are errors rather than nulls.
        let schema = try Schema([.init("Item", attributes: [.init("t", .string)])])
        #expect(throws: DataStoreError.self) { try PredicateEvaluator(schema: schema) { _ in nil }.evaluate(.attribute("u").isNil, on: s) }
        #expect(try PredicateEvaluator(schema: schema) { _ in nil }.evaluate(.attribute("t") == "x", on: s))
    }

    @Test func theBuilderMakesTheExpectedTree() {
        let day = Date(timeIntervalSinceReferenceDate: 0)
        let p: FetchPredicate =
            .attribute("title").contains("swift", options: .caseInsensitive) && .attribute("date") > day
            && .relationship("tags").any(.attribute("name") == "news") || !.attribute("attachment.post.title").isNil
        #expect(
            p
                == .or([
                    .and([
                        .string(path: "title", .contains, needle: "swift", options: .caseInsensitive),
                        .compare(path: "date", .greater, value: .date(day)),
                        .any(path: "tags", .compare(path: "name", .equal, value: "news")),
                    ]),
                    .not((.isNull(path: PropertyPath(components: ["attachment", "post", "title"])))),
                ]))
    }
}
