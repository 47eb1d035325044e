import Engine

/// Part 1: the API in a few lines. Commit, close, reopen, read every key back, scan a prefix.
func runDemo(under parent: String) throws {
    print("== Demo ==")
    let directory = try TemporaryDirectory(under: parent, label: "demo")
    defer { directory.remove() }
    print("store directory: \(directory.path)")

    // A batch is atomic: after any crash all of its operations are present, or none.
    let store = try LogStore.open(at: directory.path)
    defer { try? store.close() }
    var batch = WriteBatch()
    batch.put(bytes("user:1"), bytes(#"{"name":"Ada","lang":"swift"}"#))
    batch.put(bytes("user:2"), bytes(#"{"name":"Grace","lang":"cobol"}"#))
    batch.put(bytes("user:3"), bytes(#"{"name":"Barbara","lang":"clu"}"#))
    batch.put(bytes("config:theme"), bytes("dark"))
    let first = try store.commit(batch)
    print("commit \(first): put user:1, user:2, user:3, config:theme (\(batch.count) operations)")

    // `write` builds and commits a batch in one call; a later operation on a key wins.
    let second = try store.write { batch in
        batch.put(bytes("user:1"), bytes(#"{"name":"Ada","lang":"swift","admin":true}"#))
        batch.delete(bytes("user:2"))
    }
    print("commit \(second): put user:1 (new value), delete user:2")
    try store.close()
    print("closed")

    let reopened = try LogStore.open(at: directory.path)
    defer { try? reopened.close() }
    print("reopened: last sequence \(reopened.statistics.lastSequence)")
    for key in ["config:theme", "user:1", "user:2", "user:3"] {
        let value = try reopened.value(forKey: bytes(key)).map(Text.string) ?? "(absent)"
        print("  value(forKey: \"\(key)\") = \(value)")
    }
    let scan = Array(try reopened.scan(prefix: bytes("user:")))
    print("scan(prefix: \"user:\") found \(scan.count) keys:")
    for entry in scan {
        print("  \(Text.string(entry.key)) = \(Text.string(try entry.value()))")
    }
    let statistics = reopened.statistics
    print("statistics: keyCount \(statistics.keyCount), bytesOnDisk \(statistics.bytesOnDisk)"
        + " in \(statistics.segments.count) segment(s), liveBytes \(statistics.liveBytes),"
        + " deadBytes \(statistics.deadBytes)")
    try reopened.close()
    print("closed; removing \(directory.path)")
    print("")
}
