import Foundation

/// A README example and the test code it is copied from, for tests that check the README shows
/// the compiled example unchanged.
package enum ReadmeSnippet {
    /// The lines (trimmed) of the test source `sourcePath` between `// README:begin` and
    /// `// README:end`, and those of the repository's `document` (README.md, or a guide such as
    /// `docs/engine.md`) between the HTML comments `<!-- <marker>:begin -->` and
    /// `<!-- <marker>:end -->` (code fences left out). The repository's root is three directories
    /// above `sourcePath` (`Tests/<Target>/<File>.swift`, `Sources/<Target>/<File>.swift`).
    package static func compiledAndShown(
        sourcePath: String, marker: String, document: String = "README.md"
    ) throws -> (compiled: [String], shown: [String]) {
        let source = URL(fileURLWithPath: sourcePath)
        let root = source.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let code = try String(contentsOf: source, encoding: .utf8)
        let readme = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
        return (
            lines(code, from: "// README" + ":begin", to: "// README" + ":end"),
            lines(readme, from: "<!-- \(marker):begin -->", to: "<!-- \(marker):end -->").filter { !$0.hasPrefix("```") }
        )
    }

    /// The lines strictly between the first line containing `begin` and the next containing
    /// `end`, trimmed; none when either is missing.
    static func lines(_ text: String, from begin: String, to end: String) -> [String] {
        let all = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = all.firstIndex(where: { $0.contains(begin) }),
            let stop = all[start...].firstIndex(where: { $0.contains(end) })
        else { return [] }
        return all[(start + 1)..<stop].map { $0.trimmingCharacters(in: .whitespaces) }
    }
}
