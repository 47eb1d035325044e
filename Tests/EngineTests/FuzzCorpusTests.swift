import EngineFuzzing
import Foundation
import Testing

/// The fuzz corpora (Fuzz/Corpus/<target>/, Fuzz/README.md) replayed through their targets in a
/// normal build: every seed and every reproducer of a bug the fuzzer found must decode or be
/// rejected with an `EngineError`, never trap.
@Suite struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/Corpus")

    static func inputs(_ target: FuzzTarget) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(
            at: corpus.appendingPathComponent(target.rawValue), includingPropertiesForKeys: nil
        ).sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    @Test(arguments: FuzzTarget.allCases)
    func everyCorpusInputIsDecodedOrRejectedWithoutTrapping(_ target: FuzzTarget) throws {
        let inputs = try Self.inputs(target)
        #expect(!inputs.isEmpty, "Fuzz/Corpus/\(target.rawValue) holds no inputs")
        for input in inputs {
            _ = target.run(Array(try Data(contentsOf: input)))
            // With every checksum repaired too: the path the fuzzer takes half the time.
            var repaired = Array(try Data(contentsOf: input))
            if !repaired.isEmpty { repaired[0] ^= FuzzTarget.Flags.repair.rawValue }
            _ = target.run(repaired)
        }
    }

    /// The seeds the corpus was started from are still what the engine writes: each decodes to
    /// the end (a seed that no longer parses would leave its target fuzzing only the first check).
    @Test func theSeedsAreWellFormed() throws {
        let seeds = try Seeds.make()
        #expect(Set(seeds.keys) == Set(FuzzTarget.allCases))
        for (target, inputs) in seeds {
            #expect(!inputs.isEmpty, "no seed for \(target.rawValue)")
            for input in inputs { #expect(target.run(input.bytes), "\(target.rawValue) rejects seed \(input.name)") }
        }
    }
}
