// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "WALStore",
    products: [
        .library(name: "Engine", targets: ["Engine"]),
        .library(name: "Snapshot", targets: ["Snapshot"]),
        .library(name: "Models", targets: ["Models"]),
        .executable(name: "walstore-example", targets: ["WALStoreExample"]),
        // The command-line tool: info, verify, stats, compact, salvage, dump, get, scan, and the
        // CloudKit export and import (docs/tool.md).
        .executable(name: "walstore", targets: ["WALStoreTool"]),
        // The fuzz targets' entry points, for the sibling package in Fuzz/ (Fuzz/README.md).
        .library(name: "EngineFuzzing", targets: ["EngineFuzzing"]),
        // The reference store for tests and comparisons: the whole-file JSONStore, the blog model
        // and the DataStore contract suite, for the benchmark package in Benchmarks/ (its
        // Core Data-shaped SQLite store passes the same contract). Not for apps.
        .library(name: "SnapshotTestSupport", targets: ["SnapshotTestSupport"]),
    ],
    targets: [
        // zlib from Debian's zlib1g-dev: deflate/inflate and crc32.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .target(
            name: "Engine",
            dependencies: ["CZlib"]
        ),
        // The fault-injecting file system and other helpers shared by the test targets.
        .target(
            name: "EngineTestSupport",
            dependencies: ["Engine"]
        ),
        // One entry point per decoder of bytes from disk, and seed inputs: what the libFuzzer
        // driver in Fuzz/ calls, and what the corpus replay test runs. No `main`: the root
        // package builds it without the fuzzer flags.
        .target(
            name: "EngineFuzzing",
            dependencies: ["Engine", "EngineTestSupport", "Snapshot"]
        ),
        // SwiftData's custom-data-store contract (identifiers, snapshots, schema, predicates,
        // the DataStore protocol) on top of the engine.
        .target(
            name: "Snapshot",
            dependencies: ["Engine"]
        ),
        // A whole-file JSON DataStore, the blog model and the DataStore contract suite: the
        // reference store for the test targets and the benchmarks' comparisons.
        .target(
            name: "SnapshotTestSupport",
            dependencies: ["Snapshot"]
        ),
        // A container of several stores, a context (a unit of work) and typed models with
        // Foundation's #Predicate, on top of the Snapshot module.
        .target(
            name: "Models",
            dependencies: ["Snapshot"]
        ),
        // The README's example: a blog app on the Models layer (`swift run walstore-example`).
        .executableTarget(
            name: "WALStoreExample",
            dependencies: ["Models", "Snapshot"]
        ),
        // `walstore`, the command-line tool (docs/tool.md).
        .executableTarget(
            name: "WALStoreTool",
            dependencies: ["Engine", "Snapshot"]
        ),
        // A child process for the lock test: tries to open a store and reports by exit code.
        .executableTarget(
            name: "walstore-lock-probe",
            dependencies: ["Engine"],
            path: "Tests/LockProbe"
        ),
        // The tests' allocation counter (glibc's malloc wrapped): what the tests of "nothing is
        // allocated per entry" count with.
        .target(
            name: "CAllocationCounter",
            path: "Tests/CAllocationCounter"
        ),
        .testTarget(
            name: "EngineTests",
            dependencies: ["Engine", "EngineTestSupport", "EngineFuzzing", "walstore-lock-probe", "CAllocationCounter"]
        ),
        .testTarget(
            name: "SnapshotTests",
            dependencies: ["Snapshot", "SnapshotTestSupport", "EngineTestSupport", "CAllocationCounter"]
        ),
        .testTarget(
            name: "ModelsTests",
            dependencies: ["Models", "Snapshot", "SnapshotTestSupport", "EngineTestSupport", "WALStoreExample"]
        ),
        // Runs the built `walstore` as a subprocess on real stores.
        .testTarget(
            name: "ToolTests",
            dependencies: ["Engine", "Snapshot", "SnapshotTestSupport", "EngineTestSupport", "WALStoreTool"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
