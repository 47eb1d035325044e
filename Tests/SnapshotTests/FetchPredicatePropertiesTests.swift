import Snapshot
import Testing

/// A predicate names the properties it reads on the object it tests: the first component of
/// every path, under every connective; identifier sets, constants and entity tests read none.
@Suite struct FetchPredicatePropertiesTests {
    @Test func aPredicateReadsTheFirstComponentOfEachOfItsPaths() {
        let predicate: FetchPredicate = .and([
            .compare(path: "title", .equal, value: .string("a")),
            .or([.isNull(path: "author.name"), .not(.string(path: "body", .contains, needle: "x", options: []))]),
            .oneOf(path: "rank", values: [.int(1)]),
            .any(path: "tags", .constant(true)),
            .entity("Post", includesSubentities: true),
            .identifierIn([]),
            .constant(false),
        ])
        #expect(predicate.propertiesRead == ["title", "author", "body", "rank", "tags"])
        #expect(FetchPredicate.constant(true).propertiesRead.isEmpty)
    }
}
