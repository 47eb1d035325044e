import Foundation
import Snapshot
import Testing

/// The byte path agrees with the snapshot path: predicates compiled to matchers over format-2
/// records answer what ``PredicateEvaluator`` answers on the same objects' snapshots (or leave
/// it to them), on seeded random records and predicates whose strings are chosen to break byte
/// shortcuts (canonically equivalent spellings, `\r\n`, case and diacritics, non-ASCII folds).
@Suite struct RecordMatcherTests {
    static let store = "S"
    static let schema: Schema = {
        do {
            return try Schema([
                .init(
                    "Item",
                    attributes: [
                        .init("name", .string, isOptional: true),
                        .init("note", .string, isOptional: true),
                        .init("score", .double, isOptional: true),
                        .init("rank", .int, isOptional: true),
                        .init("small", .int8, isOptional: true),
                        .init("when", .date, isOptional: true),
                        .init("flag", .bool, isOptional: true),
                    ],
                    relationships: [
                        .init("parent", destination: "Item", inverse: "children"), .init("children", destination: "Item", .toMany, inverse: "parent"),
                    ]),
                .init("Special", superentity: "Item", attributes: [.init("extra", .string, isOptional: true)]),
            ])
        } catch {
            preconditionFailure("a fixed, consistent schema: \(error)")
        }
    }()

    static let strings: [String] = [
        "", "a", "A", "abc", "ABC", "aBc", "swift", "Swift rocks", "I love SWIFT", "\u{e9}t\u{e9}", "e\u{301}te\u{301}", "ete", "ETE",
        "a\r\nb", "a\rb", "\r\n", "\r", "\n", "stra\u{df}e", "STRASSE", "strasse", "^~`", "a~b", "na\u{ef}ve", "naive", "\u{1F600}x",
        "\u{130}", "i", "Z", "zz", "a\u{0}b",
    ]
    static let needles: [String] = [
        "", "a", "A", "b", "bc", "BC", "swift", "SWIFT", "e", "\u{e9}", "e\u{301}", "te", "\r", "\n", "\r\n", "b\r", "ss", "\u{df}",
        "~", "^", "i", "I", "\u{ef}", "x", "a\u{0}",
    ]

    struct Generator {
        var seed: UInt64
        mutating func next(_ n: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(n))
        }
        mutating func pick<T>(_ list: [T]) -> T { list[next(list.count)] }
        mutating func maybe<T>(_ list: [T]) -> T? { next(5) == 0 ? nil : pick(list) }
    }

    static func snapshot(_ g: inout Generator) throws -> DefaultSnapshot {
        let entity = g.next(4) == 0 ? "Special" : "Item"
        let id = try PersistentIdentifier.identifier(for: store, entityName: entity, primaryKey: UUID())
        let parent = try PersistentIdentifier.identifier(for: store, entityName: "Item", primaryKey: UUID())
        var values: [String: PropertyValue] = [
            "name": g.maybe(strings).map(PropertyValue.string) ?? .null,
            "note": g.maybe(strings).map(PropertyValue.string) ?? .null,
            "score": g.maybe([-0.0, 0.0, .nan, 1, 2.5, -3, .infinity]).map(PropertyValue.double) ?? .null,
            "rank": g.maybe([0, 1, -1, 300, Int.max, Int.min]).map(PropertyValue.int) ?? .null,
            "small": g.maybe([Int8(0), 1, -128, 127]).map(PropertyValue.int8) ?? .null,
            "when": g.maybe([0.0, -0.0, 1e9, -5]).map { PropertyValue.date(Date(timeIntervalSinceReferenceDate: $0)) } ?? .null,
            "flag": g.maybe([true, false]).map(PropertyValue.bool) ?? .null,
            "parent": .toOne(g.next(2) == 0 ? parent : nil),
        ]
        if entity == "Special" { values["extra"] = g.maybe(strings).map(PropertyValue.string) ?? .null }
        return DefaultSnapshot(persistentIdentifier: id, values: values)
    }

    static func predicate(_ g: inout Generator, depth: Int = 0) -> FetchPredicate {
        let stringProperty: PropertyPath = g.pick(["name", "note"])
        let comparisons: [FetchPredicate.Comparison] = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual]
        let options: [FetchPredicate.StringOptions] = [[], .caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive]]
        switch g.next(depth < 2 ? 12 : 8) {
        case 0: return .compare(path: stringProperty, g.pick(comparisons), value: .string(g.pick(strings)))
        case 1:
            return .string(path: stringProperty, g.pick([.contains, .beginsWith, .endsWith]), needle: g.pick(needles), options: g.pick(options))
        case 2:
            return .compare(
                path: g.pick(["score", "rank", "small"]), g.pick(comparisons),
                value: g.pick([.int(0), .double(-0.0), .double(.nan), .int8(1), .double(2.5), .uint64(UInt64.max), .null]))
        case 3: return .isNull(path: g.pick(["name", "score", "when", "flag", "parent", "rank"]))
        case 4: return .oneOf(path: stringProperty, values: (0..<g.next(4)).map { _ in g.next(6) == 0 ? .null : .string(g.pick(strings)) })
        case 5: return .compare(path: "when", g.pick(comparisons), value: .date(Date(timeIntervalSinceReferenceDate: g.pick([0.0, -0.0, 1e9]))))
        case 6: return .compare(path: "flag", g.pick([.equal, .notEqual]), value: g.pick([.bool(true), .bool(false), .null]))
        case 7:
            return g.pick([
                .entity("Special", includesSubentities: false), .entity("Item", includesSubentities: true),
                .entity("Item", includesSubentities: false), .constant(g.next(2) == 0),
            ])
        case 8: return .and((0..<(1 + g.next(3))).map { _ in predicate(&g, depth: depth + 1) })
        case 9: return .or((0..<(1 + g.next(3))).map { _ in predicate(&g, depth: depth + 1) })
        case 10: return .not(predicate(&g, depth: depth + 1))
        default: return .compare(path: "parent.name", .equal, value: .string("a"))
        }
    }

    @Test func compiledPredicatesAnswerAsTheEvaluatorOnRandomRecords() throws {
        var g = Generator(seed: 2026)
        let evaluator = PredicateEvaluator(schema: Self.schema) { _ in nil }
        var decided = 0, total = 0
        for round in 0..<2000 {
            let snapshot = try Self.snapshot(&g)
            let entity = snapshot.persistentIdentifier.entityName
            let record = RecordWriter.record(of: snapshot, fields: RecordFieldList(schema: Self.schema, entity: entity))
            let predicate = Self.predicate(&g)
            guard case .uuid(let pk) = snapshot.persistentIdentifier.primaryKey else { continue }
            let expected = Result { try evaluator.evaluate(predicate, on: snapshot) }
            let answer = Result {
                try RecordMatcher.answer(predicate, schema: Self.schema, entity: entity, record: record, primaryKey: pk, storeIdentifier: Self.store)
            }
            total += 1
            switch (expected, answer) {
            case (.success(let e), .success(let a?)):
                decided += 1
                #expect(a == e, "round \(round): \(predicate) on \(snapshot.values)")
            case (_, .success(nil)):
                break
            case (.failure, .failure):
                break
            case (.success(let e), .failure(let error)):
                Issue.record("round \(round): \(predicate) threw \(error), the evaluator answered \(e)")
            case (.failure(let error), .success(let a?)):
                Issue.record("round \(round): \(predicate) answered \(a), the evaluator threw \(error)")
            }
        }
        #expect(decided * 2 > total, "most predicates are decided on the bytes (\(decided) of \(total))")
    }

    /// Every string against every needle and constant, for each string operation, option set
    /// and comparison: the byte shortcuts never change an answer.
    @Test func everyStringOperationAndComparisonAnswersAsTheEvaluator() throws {
        let evaluator = PredicateEvaluator(schema: Self.schema) { _ in nil }
        let options: [FetchPredicate.StringOptions] = [[], .caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive]]
        let comparisons: [FetchPredicate.Comparison] = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual]
        var decided = 0
        for string in Self.strings {
            let id = try PersistentIdentifier.identifier(for: Self.store, entityName: "Item", primaryKey: UUID())
            let snapshot = DefaultSnapshot(persistentIdentifier: id, values: ["name": .string(string)])
            let record = RecordWriter.record(of: snapshot, fields: RecordFieldList(schema: Self.schema, entity: "Item"))
            guard case .uuid(let pk) = id.primaryKey else { continue }
            var predicates: [FetchPredicate] = []
            for needle in Self.needles {
                for operation in [FetchPredicate.StringOperation.contains, .beginsWith, .endsWith] {
                    for o in options { predicates.append(.string(path: "name", operation, needle: needle, options: o)) }
                }
            }
            for other in Self.strings {
                for c in comparisons { predicates.append(.compare(path: "name", c, value: .string(other))) }
            }
            for predicate in predicates {
                let answer = try RecordMatcher.answer(
                    predicate, schema: Self.schema, entity: "Item", record: record, primaryKey: pk, storeIdentifier: Self.store)
                let expected = try evaluator.evaluate(predicate, on: snapshot)
                if let answer {
                    decided += 1
                    #expect(answer == expected, "\(predicate) on \(string.debugDescription)")
                }
            }
        }
        #expect(decided > 8_000)
    }

    /// Random ASCII texts over a small alphabet (so needles often occur, in either case, near
    /// the ends and overlapping): the byte search answers every string operation as the
    /// evaluator does.
    @Test func theByteSearchAnswersAsTheEvaluatorOnRandomASCII() throws {
        let evaluator = PredicateEvaluator(schema: Self.schema) { _ in nil }
        let alphabet = Array("abAB sS.")
        var random = SystemRandomNumberGenerator()
        var decided = 0
        for _ in 0..<300 {
            let string = String((0..<Int.random(in: 0...24, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
            let id = try PersistentIdentifier.identifier(for: Self.store, entityName: "Item", primaryKey: UUID())
            let snapshot = DefaultSnapshot(persistentIdentifier: id, values: ["name": .string(string)])
            let record = RecordWriter.record(of: snapshot, fields: RecordFieldList(schema: Self.schema, entity: "Item"))
            guard case .uuid(let pk) = id.primaryKey else { continue }
            for _ in 0..<20 {
                let needle = String((0..<Int.random(in: 0...4, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
                for operation in [FetchPredicate.StringOperation.contains, .beginsWith, .endsWith] {
                    for options in [FetchPredicate.StringOptions(), .caseInsensitive] {
                        let predicate = FetchPredicate.string(path: "name", operation, needle: needle, options: options)
                        let answer = try RecordMatcher.answer(
                            predicate, schema: Self.schema, entity: "Item", record: record, primaryKey: pk, storeIdentifier: Self.store)
                        let expected = try evaluator.evaluate(predicate, on: snapshot)
                        if let answer {
                            decided += 1
                            #expect(answer == expected, "\(predicate) on \(string.debugDescription)")
                        }
                    }
                }
            }
        }
        #expect(decided > 30_000, "the ASCII texts are decided on the bytes")
    }
}
