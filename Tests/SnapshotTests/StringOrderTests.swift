import Engine
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// Strings are in one total order that agrees with Swift's `==` (canonical equivalence),
/// everywhere the store compares them: `PropertyValue`'s order, predicates, sorts, index keys
/// and uniqueness rules.
@Suite struct StringOrderTests {
    /// Spellings that are equal, or nearly so, in ways a naive comparison gets wrong.
    static let tricky: [String] = [
        "", "a", "A", "e", "f", "z", "a\u{0}b",
        // é, decomposed and precomposed, alone, followed, and with a second mark.
        "e\u{301}", "\u{e9}", "\u{e9}a", "e\u{301}a", "e\u{301}\u{301}", "\u{e9}\u{301}", "E\u{301}", "\u{c9}",
        // ậ: two combining marks in either order, and partly precomposed.
        "a\u{323}\u{302}", "a\u{302}\u{323}", "\u{1ea1}\u{302}", "\u{1ead}", "\u{e2}\u{323}",
        // Hangul: conjoining jamo against precomposed syllables.
        "\u{1100}\u{1161}", "\u{ac00}", "\u{1100}\u{1161}a", "\u{ac00}a", "\u{1100}\u{1161}\u{11a8}", "\u{ac01}", "\u{ac00}\u{11a8}",
        "\u{1100}", "\u{1161}", "\u{1113}\u{1161}", "\u{d7a4}",
        // Å three ways.
        "\u{212b}", "\u{c5}", "A\u{30a}",
        // Emoji with modifiers, flags, a lone combining mark, a newer mark in two orders.
        "👍", "👍🏽", "👍\u{1f3fd}a", "\u{1f3fd}", "🇫🇷", "\u{301}", "\u{897}\u{323}", "\u{323}\u{897}", "\u{323}",
    ]

    static func order(_ a: String, _ b: String) -> Int { CanonicalStringOrder.compare(a, b) }

    @Test func theStringOrderIsTotalAntisymmetricAndAgreesWithSwiftsEquality() {
        for x in Self.tricky {
            for y in Self.tricky {
                let (a, b) = (PropertyValue.string(x), PropertyValue.string(y))
                let holds = [a < b, a == b, b < a].filter { $0 }.count
                #expect(holds == 1, "exactly one of <, ==, > holds for \(x.debugDescription) and \(y.debugDescription)")
                #expect((a == b) == (x == y), "PropertyValue == agrees with String == for \(x.debugDescription), \(y.debugDescription)")
                #expect((a < b) == (Self.order(x, y) < 0) && Self.order(x, y) == -Self.order(y, x), "antisymmetric")
                if a == b { #expect(a.hashValue == b.hashValue, "equal values hash alike: \(x.debugDescription)") }
            }
        }
    }

    @Test func theStringOrderIsTransitive() {
        let values = Self.tricky.map(PropertyValue.string)
        for a in values {
            for b in values where a <= b {
                for c in values where b <= c {
                    #expect(a <= c, "\(a) <= \(b) <= \(c)")
                    if a == b && b == c { #expect(a == c) }
                }
            }
        }
    }

    @Test func theOrderIsThatOfTheNFCFormsUTF8Bytes() {
        #expect(PropertyValue.string("e\u{301}") == .string("\u{e9}"))
        #expect(PropertyValue.string("e\u{301}") < .string("\u{e9}a"), "é is a prefix of éa, however é is spelled")
        #expect(PropertyValue.string("\u{e9}") < .string("\u{e9}a"))
        #expect(PropertyValue.string("\u{1100}\u{1161}") < .string("\u{ac00}a"), "가 is a prefix of 가a, in jamo or as a syllable")
        #expect(PropertyValue.string("z") < .string("e\u{301}"), "é (C3 A9) sorts after every ASCII letter")
        #expect(PropertyValue.string("\u{1113}\u{1161}") != .string("\u{d7a4}"), "an old jamo pair is not the unassigned U+D7A4")
        #expect(CanonicalStringOrder.normalizedUTF8("a\u{302}\u{323}") == Array("\u{1ead}".utf8))
        #expect(CanonicalStringOrder.normalizedUTF8("\u{897}\u{323}") == Array("\u{323}\u{897}".utf8), "marks in canonical order")
        for x in Self.tricky {
            for y in Self.tricky {
                let (p, q) = (CanonicalStringOrder.normalizedUTF8(x), CanonicalStringOrder.normalizedUTF8(y))
                let bytes = p == q ? 0 : (p.lexicographicallyPrecedes(q) ? -1 : 1)
                #expect(CanonicalStringOrder.compare(x, y) == bytes, "\(x.debugDescription) vs \(y.debugDescription)")
            }
        }
    }

    @Test func theFastPathsAgreeWithComparingNormalizedBytes() {
        // ASCII before and after marks, so that strings first differ at every kind of place.
        let tails = ["", "a", "b", "\u{301}", "a\u{301}", "b\u{323}", "\u{e9}"]
        for x in Self.tricky {
            for y in Self.tricky {
                for s in tails {
                    for t in tails {
                        let (p, q) = ("ab" + x + s, "ab" + y + t)
                        let (n, m) = (CanonicalStringOrder.normalizedUTF8(p), CanonicalStringOrder.normalizedUTF8(q))
                        let bytes = n == m ? 0 : (n.lexicographicallyPrecedes(m) ? -1 : 1)
                        if CanonicalStringOrder.compare(p, q) != bytes {
                            Issue.record("\(p.debugDescription) vs \(q.debugDescription): \(CanonicalStringOrder.compare(p, q)), bytes say \(bytes)")
                        }
                        #expect(n == Array(String(decoding: n, as: UTF8.self)._nfcCodeUnits), "normalizedUTF8 is the standard library's NFC")
                    }
                }
            }
        }
    }

    @Test func urlsAndIdentifiersCompareTheirStringsInTheSameOrder() throws {
        let decomposed = try #require(URL(string: "https://example.com/a"))
        #expect(PropertyValue.url(decomposed) == .url(decomposed))
        let a = PersistentIdentifier.temporary(entityName: "Post")
        let spelled = try PersistentIdentifier.identifier(for: "S", entityName: "Post", primaryKey: "e\u{301}")
        let other = try PersistentIdentifier.identifier(for: "S", entityName: "Post", primaryKey: "\u{e9}a")
        #expect(spelled < other, "string primary keys order as strings do")
        #expect(a < spelled)
    }

    // MARK: Predicates

    static var evaluator: PredicateEvaluator { PredicateEvaluator(resolve: { _ in nil }) }

    static func post(_ title: String) -> DefaultSnapshot {
        DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Post"), values: ["title": .string(title)])
    }

    @Test func comparisonsInPredicatesFollowTheOrder() throws {
        for x in Self.tricky {
            for y in Self.tricky {
                let s = Self.post(x)
                let c = Self.order(x, y)
                #expect(try Self.evaluator.evaluate(.attribute("title") == y, on: s) == (c == 0), "\(x.debugDescription) == \(y.debugDescription)")
                #expect(try Self.evaluator.evaluate(.attribute("title") < y, on: s) == (c < 0))
                #expect(try Self.evaluator.evaluate(.attribute("title") <= y, on: s) == (c <= 0))
                #expect(try Self.evaluator.evaluate(.attribute("title") > y, on: s) == (c > 0))
                #expect(try Self.evaluator.evaluate(.attribute("title") >= y, on: s) == (c >= 0))
                #expect(try Self.evaluator.evaluate(.attribute("title").isIn([y]), on: s) == (c == 0))
            }
        }
        let between: FetchPredicate = .attribute("title") >= "e\u{301}" && .attribute("title") < "\u{e9}b"
        #expect(try ["\u{e9}", "e\u{301}a", "e\u{301}", "\u{e9}a\u{e9}"].allSatisfy { try Self.evaluator.evaluate(between, on: Self.post($0)) })
        #expect(try !Self.evaluator.evaluate(between, on: Self.post("e")))
    }

    struct Item { var title: String }

    @Test func containsBeginsWithAndEqualityAgreeWithFoundationsPredicate() throws {
        for haystack in Self.tricky {
            for needle in Self.tricky {
                let item = Item(title: haystack)
                let snapshot = Self.post(haystack)
                let contains = #Predicate<Item> { $0.title.contains(needle) }
                let starts = #Predicate<Item> { $0.title.starts(with: needle) }
                let equal = #Predicate<Item> { $0.title == needle }
                let what = "\(haystack.debugDescription), \(needle.debugDescription)"
                #expect(
                    try Self.evaluator.evaluate(.attribute("title").contains(needle), on: snapshot) == contains.evaluate(item), "contains \(what)")
                #expect(
                    try Self.evaluator.evaluate(.attribute("title").beginsWith(needle), on: snapshot) == starts.evaluate(item), "beginsWith \(what)")
                #expect(try Self.evaluator.evaluate(.attribute("title") == needle, on: snapshot) == equal.evaluate(item), "== \(what)")
            }
        }
    }

    @Test func foldedMatchesTreatCanonicallyEquivalentSpellingsAlike() throws {
        let options: [FetchPredicate.StringOptions] = [.caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive]]
        for option in options {
            for x in Self.tricky {
                for y in Self.tricky where x == y {
                    for needle in Self.tricky {
                        let p: FetchPredicate = .attribute("title").contains(needle, options: option)
                        #expect(
                            try Self.evaluator.evaluate(p, on: Self.post(x)) == Self.evaluator.evaluate(p, on: Self.post(y)),
                            "\(x.debugDescription) and \(y.debugDescription) contain \(needle.debugDescription) alike")
                        let q: FetchPredicate = .attribute("title").beginsWith(x, options: option)
                        #expect(
                            try Self.evaluator.evaluate(q, on: Self.post(needle))
                                == Self.evaluator.evaluate(.attribute("title").beginsWith(y, options: option), on: Self.post(needle)),
                            "needles \(x.debugDescription) and \(y.debugDescription) alike")
                    }
                }
            }
        }
        #expect(
            try Self.evaluator.evaluate(
                .attribute("title").contains("E", options: [.caseInsensitive, .diacriticInsensitive]), on: Self.post("caf\u{e9}")))
        #expect(try Self.evaluator.evaluate(.attribute("title").contains("\u{c9}", options: .caseInsensitive), on: Self.post("cafe\u{301}")))
    }

    // MARK: Sorts

    @Test func aSortOfEquivalentSpellingsDoesNotDependOnTheInputOrder() throws {
        let titles = ["\u{e9}a", "e\u{301}", "\u{e9}", "\u{1100}\u{1161}", "\u{ac00}a", "\u{ac00}", "z"]
        let expected = ["z", "\u{e9}", "\u{e9}", "\u{e9}a", "\u{ac00}", "\u{ac00}", "\u{ac00}a"].map(CanonicalStringOrder.normalizedUTF8)
        var permutation = titles
        for round in 0..<200 {
            permutation.shuffle()
            let sorted = try Self.evaluator.sorted(permutation.map(Self.post), by: [FetchSortDescriptor("title")])
            let got = sorted.map { s -> [UInt8] in
                guard case .string(let t)? = s.values["title"] else { return [] }
                return CanonicalStringOrder.normalizedUTF8(t)
            }
            #expect(got == expected, "round \(round): \(permutation.map(\.debugDescription))")
            let reversed = try Self.evaluator.sorted(permutation.map(Self.post), by: [FetchSortDescriptor("title", order: .reverse)])
            #expect(
                reversed.map { s -> [UInt8] in
                    guard case .string(let t)? = s.values["title"] else { return [] }
                    return CanonicalStringOrder.normalizedUTF8(t)
                } == expected.reversed())
            // A mixed column (a null among the strings) sorts the same way.
            let mixed = try Self.evaluator.sorted(
                permutation.map(Self.post) + [DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Post"), values: [:])],
                by: [FetchSortDescriptor("title")])
            #expect(
                mixed.dropFirst().map { s -> [UInt8] in
                    guard case .string(let t)? = s.values["title"] else { return [] }
                    return CanonicalStringOrder.normalizedUTF8(t)
                } == expected)
        }
    }

    static func titles(_ snapshots: [DefaultSnapshot]) -> [String] {
        snapshots.map { s in if case .string(let t)? = s.values["title"] { t } else { "?" } }
    }

    @Test func aStoreSortsEquivalentSpellingsTheSameWhateverTheirPrimaryKeys() throws {
        let date = Date(timeIntervalSinceReferenceDate: 800_000_000)
        for _ in 0..<5 {
            let home = WALHome()
            defer { home.temporary.remove() }
            let store = try home.open()
            let spellings = ["\u{e9}a", "e\u{301}", "\u{e9}", "e\u{301}a", "e", "f"]
            _ = try store.save(
                DataStoreSaveChangesRequest(inserted: (0..<24).map { BlogModel.post(title: spellings[$0 % spellings.count], date: date) }))
            let sorted = try store.fetch(FetchDescriptor(entityName: "Post", sortBy: [FetchSortDescriptor("title")])).fetchedSnapshots
            let forms = Self.titles(sorted).map { String(decoding: CanonicalStringOrder.normalizedUTF8($0), as: UTF8.self) }
            #expect(
                forms == Array(repeating: "e", count: 4) + Array(repeating: "f", count: 4) + Array(repeating: "\u{e9}", count: 8)
                    + Array(repeating: "\u{e9}a", count: 8))
            // The index walk (sorted by the index's first property, with a limit) agrees.
            let top = try store.fetch(
                FetchDescriptor(entityName: "Post", sortBy: [FetchSortDescriptor("title"), FetchSortDescriptor("date")], fetchLimit: 12)
            ).fetchedSnapshots
            #expect(top.map(\.persistentIdentifier) == Array(sorted.prefix(12)).map(\.persistentIdentifier))
            try store.close()
        }
    }

    // MARK: Index and uniqueness keys

    @Test func indexedFetchesFindEverySpellingOfAString() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        let date = Date(timeIntervalSinceReferenceDate: 800_000_000)
        let titles = ["e\u{301}", "\u{e9}", "\u{e9}a", "e\u{301}a", "e", "f", "\u{ac00}", "\u{1100}\u{1161}"]
        _ = try store.save(DataStoreSaveChangesRequest(inserted: titles.map { BlogModel.post(title: $0, date: date) }))
        let cases: [(FetchPredicate, Int)] = [
            (.attribute("title") == "\u{e9}", 2),
            (.attribute("title") == "e\u{301}", 2),
            (.attribute("title") == "\u{1100}\u{1161}", 2),
            (.attribute("title") >= "e\u{301}" && .attribute("title") < "\u{e9}b", 4),
            (.attribute("title") > "\u{e9}", 4),
            (.attribute("title") <= "e\u{301}", 4),
            (.attribute("title").beginsWith("e\u{301}"), 4),
            (.attribute("title").beginsWith("\u{1100}"), 0),
        ]
        for (predicate, count) in cases {
            let read = store.recordsRead
            let indexed = try store.fetch(FetchDescriptor(entityName: "Post", predicate: predicate)).fetchedSnapshots
            #expect(indexed.count == count, "\(predicate)")
            #expect(store.recordsRead - read == count, "\(predicate) read its index entries only")
            let scanned = try store.fetch(FetchDescriptor(entityName: "Post", predicate: .or([predicate]))).fetchedSnapshots
            #expect(Set(indexed.map(\.persistentIdentifier)) == Set(scanned.map(\.persistentIdentifier)), "the index answers as a scan: \(predicate)")
        }
        // Two spellings have one index key, and the keys are in the string order.
        let prefix = [UInt8(ascii: "I")] + Array("Post".utf8) + [0] + Array("title,date".utf8) + [0]
        let keys = try store.engine.scan(prefix: prefix).collect().map { Array($0.key.dropFirst(prefix.count).dropLast(16 + 9)) }
        #expect(keys.count == titles.count)
        let wanted = titles.sorted { CanonicalStringOrder.compare($0, $1) < 0 }.map { [0x40] + CanonicalStringOrder.normalizedUTF8($0) + [0] }
        #expect(keys == wanted, "index keys are the NFC bytes, in the string order")
        try store.close()
    }

    @Test func aUniqueAttributeTreatsEquivalentSpellingsAsOneValue() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        let first = try #require(
            try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "caf\u{e9}", colour: "red")])).remappedIdentifiers.values.first)
        let again = BlogModel.tag(name: "cafe\u{301}", colour: "blue")
        let result = try store.save(DataStoreSaveChangesRequest(inserted: [again]))
        #expect(result.remappedIdentifiers[again.persistentIdentifier] == first, "the other spelling upserts the stored tag")
        // Two spellings inserted in one save are one value: refused as two inserts of it.
        let (a, b) = (BlogModel.tag(name: "\u{1ead}"), BlogModel.tag(name: "a\u{302}\u{323}"))
        let refusal = #expect(throws: DataStoreError.self) { try store.save(DataStoreSaveChangesRequest(inserted: [a, b])) }
        #expect(refusal?.code == .uniqueness)
        #expect(
            Set([refusal?.identifier].compactMap { $0 } + (refusal?.relatedIdentifiers ?? [])) == [a.persistentIdentifier, b.persistentIdentifier])
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [a]))
        let tags = try store.all("Tag")
        #expect(tags.count == 2)
        #expect(tags.first { $0.persistentIdentifier == first }?.values["colour"] == .string("blue"))
        // A string that only Foundation's older normalization conflates is another value.
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "\u{1113}\u{1161}"), BlogModel.tag(name: "\u{d7a4}")]))
        #expect(try store.all("Tag").count == 4)
        try store.close()
    }

    @Test func anUpdateToAnotherSpellingOfAnotherObjectsUniqueValueIsRefused() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        let (a, b) = (BlogModel.tag(name: "caf\u{e9}"), BlogModel.tag(name: "tea"))
        let ids = try store.save(DataStoreSaveChangesRequest(inserted: [a, b])).remappedIdentifiers
        let teaID = try #require(ids[b.persistentIdentifier])
        var tea = try #require(try store.snapshot(teaID))
        tea.values["name"] = .string("cafe\u{301}")
        let files = try home.files()
        #expect {
            _ = try store.save(DataStoreSaveChangesRequest(updated: [tea]))
        } throws: { ($0 as? DataStoreError)?.code == .uniqueness }
        #expect(try home.files() == files, "the refused save wrote nothing")
        try store.close()
    }

    // MARK: Stores written before (header version 2)

    static let words: Schema = {
        do {
            return try Schema([.init("Word", attributes: [.init("text", .string, options: .unique)], indexes: [["text"]])])
        } catch { preconditionFailure("\(error)") }
    }()

    static func word(_ text: String) -> DefaultSnapshot {
        DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Word"), values: ["text": .string(text)])
    }

    static let uniquePrefix = [UInt8(ascii: "U")] + Array("Word".utf8) + [0] + Array("text".utf8) + [0]
    static let indexPrefix = [UInt8(ascii: "I")] + Array("Word".utf8) + [0] + Array("text".utf8) + [0]
    static let headerKey = [0x00] + Array("store".utf8)

    /// `bytes` with every occurrence of `old` replaced by `new`.
    static func replacing(_ old: [UInt8], with new: [UInt8], in bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if i + old.count <= bytes.count, Array(bytes[i..<i + old.count]) == old {
                out += new
                i += old.count
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return out
    }

    /// Rewrites the open store's raw keys as a version-2 store would hold them (records format
    /// 1, which the open after the string-key upgrade rewrites in format 2): each word's
    /// record text `placeholder → text`, its index and uniqueness keys in Foundation's
    /// normalization, the header's version byte 2.
    static func makeVersion2(_ store: WALDataStore, _ texts: [(placeholder: String, text: String)]) throws {
        let engine = store.engine
        try store.rewriteInRecordsFormat1()
        let header = try #require(try engine.value(forKey: headerKey))
        var puts: [([UInt8], [UInt8])] = [(headerKey, [2] + header.dropFirst())]
        var deletes: [[UInt8]] = []
        for (placeholder, text) in texts {
            let p = Array(placeholder.utf8), t = Array(text.utf8)
            let legacy = Array(text.precomposedStringWithCanonicalMapping.utf8)
            var cursor = try engine.scan(prefix: [UInt8(ascii: "R")] + Array("Word".utf8) + [0])
            while let entry = try cursor.next() {
                let value = try entry.value()
                let patched = replacing([UInt8(p.count)] + p, with: [UInt8(t.count)] + t, in: value)
                if patched != value { puts.append((entry.key, patched)) }
            }
            for prefix in [uniquePrefix, indexPrefix] {
                var cursor = try engine.scan(prefix: prefix + [0x40] + p + [0])
                while let entry = try cursor.next() {
                    deletes.append(entry.key)
                    puts.append((prefix + [0x40] + legacy + [0] + entry.key.dropFirst(prefix.count + p.count + 2), try entry.value()))
                }
            }
        }
        _ = try engine.write { batch in
            for key in deletes { batch.delete(key) }
            for (key, value) in puts { batch.put(key, value) }
        }
    }

    static func stringKeys(_ store: WALDataStore, _ prefix: [UInt8]) throws -> [[UInt8]] {
        try store.liveEntries(prefix: prefix).map { entry in
            let rest = Array(entry.key.dropFirst(prefix.count + 1))
            return Array(rest.prefix { $0 != 0 })
        }
    }

    @Test func aVersion2StoreHasItsStringKeysRebuiltAtItsFirstOpen() throws {
        let home = WALHome(Self.words)
        defer { home.temporary.remove() }
        let text = "\u{1113}\u{1161}"
        let legacy = Array(text.precomposedStringWithCanonicalMapping.utf8)
        try #require(legacy != Array(text.utf8), "Foundation's normalization differs from the standard library's here")
        var store = try home.open()
        let saved = try store.save(DataStoreSaveChangesRequest(inserted: [Self.word("XXXXXX"), Self.word("plain"), Self.word("\u{e9}t\u{e9}")]))
        try Self.makeVersion2(store, [("XXXXXX", text)])
        #expect(try Self.stringKeys(store, Self.uniquePrefix).contains(legacy), "the store holds the legacy key")
        try store.close()

        store = try home.open()
        let header = try #require(try store.engine.value(forKey: Self.headerKey))
        #expect(header[0] == 4, "the header is rewritten in the current version")
        let unique = try Self.stringKeys(store, Self.uniquePrefix), index = try Self.stringKeys(store, Self.indexPrefix)
        #expect(!unique.contains(legacy) && !index.contains(legacy), "no legacy key is left")
        #expect(Set(unique) == Set([Array(text.utf8), Array("plain".utf8), Array("\u{e9}t\u{e9}".utf8)]))
        #expect(Set(index) == Set(unique))
        let found = try store.fetch(FetchDescriptor(entityName: "Word", predicate: .attribute("text") == text)).fetchedSnapshots
        #expect(found.count == 1, "an indexed equality fetch finds it")
        let again = Self.word(text)
        let id = try store.save(DataStoreSaveChangesRequest(inserted: [again])).remappedIdentifiers[again.persistentIdentifier]
        #expect(id == found.first?.persistentIdentifier, "an insert of the same string upserts it")
        #expect(Set(saved.remappedIdentifiers.values).contains(try #require(id)))
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [Self.word("\u{d7a4}")]))
        #expect(try store.all("Word").count == 4, "the string Foundation conflated with it is another value")
        try store.close()
    }

    @Test func aVersion2StoreWhoseUniqueValuesAreNowEqualIsRefusedUnchanged() throws {
        let home = WALHome(Self.words)
        defer { home.temporary.remove() }
        // Canonically equivalent (the marks reorder), and told apart by Foundation's older data.
        let (x, y) = ("\u{897}\u{323}", "\u{323}\u{897}")
        try #require(x == y && Array(x.precomposedStringWithCanonicalMapping.utf8) != Array(y.precomposedStringWithCanonicalMapping.utf8))
        var store = try home.open()
        let a = Self.word("AAAAA"), b = Self.word("BBBBB")
        let ids = try store.save(DataStoreSaveChangesRequest(inserted: [a, b])).remappedIdentifiers
        try Self.makeVersion2(store, [("AAAAA", x), ("BBBBB", y)])
        try store.close()
        let files = try home.files()
        #expect {
            store = try home.open()
        } throws: { error in
            guard let e = error as? DataStoreError, e.code == .uniqueness else { return false }
            let named = Set([e.identifier].compactMap { $0 } + e.relatedIdentifiers)
            return named == Set([ids[a.persistentIdentifier], ids[b.persistentIdentifier]].compactMap { $0 }) && e.constraint == ["text"]
                && e.entityName == "Word"
        }
        #expect(try home.files() == files, "the files are byte-identical")
    }

    @Test func anUpgradeCutShortIsFinishedByTheNextOpen() throws {
        let home = WALHome(Self.words)
        defer { home.temporary.remove() }
        let (done, pending) = ("\u{1113}\u{1161}", "\u{897}\u{323}x")
        var store = try home.open()
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [Self.word("XXXXXX"), Self.word("YYYYYY")]))
        // As a crash after the commit that upgraded the first word would leave it: the first
        // word's keys current, the second's legacy, the header still version 2.
        try Self.makeVersion2(store, [("YYYYYY", pending)])
        _ = try store.engine.write { batch in
            for prefix in [Self.uniquePrefix, Self.indexPrefix] {
                var cursor = try store.engine.scan(prefix: prefix + [0x40] + Array("XXXXXX".utf8) + [0])
                while let entry = try cursor.next() {
                    batch.delete(entry.key)
                    batch.put(prefix + [0x40] + Array(done.utf8) + [0] + entry.key.dropFirst(prefix.count + 8), try entry.value())
                }
            }
        }
        var cursor = try store.engine.scan(prefix: [UInt8(ascii: "R")] + Array("Word".utf8) + [0])
        while let entry = try cursor.next() {
            let value = try entry.value()
            let patched = Self.replacing([6] + Array("XXXXXX".utf8), with: [6] + Array(done.utf8), in: value)
            if patched != value { _ = try store.engine.write { $0.put(entry.key, patched) } }
        }
        try store.close()
        store = try home.open()
        let unique = try Self.stringKeys(store, Self.uniquePrefix), index = try Self.stringKeys(store, Self.indexPrefix)
        let wanted = Set([done, pending].map(CanonicalStringOrder.normalizedUTF8))
        #expect(Set(unique) == wanted && unique.count == 2)
        #expect(Set(index) == wanted && index.count == 2)
        for text in [done, "\u{323}\u{897}x"] {
            #expect(
                try store.fetch(FetchDescriptor(entityName: "Word", predicate: .attribute("text") == text)).fetchedSnapshots.count == 1,
                "\(text.debugDescription)")
        }
        try store.close()
    }

    @Test func aVersion2StoreOfOrdinaryStringsKeepsItsKeys() throws {
        let home = WALHome(Self.words)
        defer { home.temporary.remove() }
        var store = try home.open()
        _ = try store.save(DataStoreSaveChangesRequest(inserted: ["plain", "caf\u{e9}", "cafe\u{301}s", "\u{ac00}"].map(Self.word)))
        try Self.makeVersion2(store, [])
        let before =
            try store.engine.scan(prefix: [UInt8(ascii: "I")]).collect().map(\.key)
            + store.engine.scan(prefix: [UInt8(ascii: "U")]).collect().map(\.key)
        try store.close()
        store = try home.open()
        let after = try store.liveEntries(prefix: [UInt8(ascii: "I")]).map(\.key) + store.liveEntries(prefix: [UInt8(ascii: "U")]).map(\.key)
        #expect(after == before, "NFC strings encode as they did")
        #expect(try #require(try store.engine.value(forKey: Self.headerKey))[0] == 4)
        #expect(try store.fetch(FetchDescriptor(entityName: "Word", predicate: .attribute("text") == "cafe\u{301}")).fetchedSnapshots.count == 1)
        try store.close()
    }
}
