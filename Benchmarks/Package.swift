// swift-tools-version:6.0
import Foundation
import PackageDescription

/// WALStore's benchmark harness: a sibling package that depends on the engine by path, so that
/// the engine package itself never depends on SQLite or the peer stores.
///
/// - `walstore-bench` needs only zlib (through the engine, and linked by its C table floor) and
///   SQLite.
/// - `walstore-datastore-bench` needs the same, and the engine package's `SnapshotTestSupport`.
/// - `walstore-peers-bench` also needs LevelDB, RocksDB and LMDB: its targets are part of the
///   package only where their headers are installed (or `WALSTORE_PEERS=1` is set), so that the
///   rest of the package builds and tests (`swift test`) on a machine without them.
let peersInstalled = ProcessInfo.processInfo.environment["WALSTORE_PEERS"] == "1"
    || ["/usr/include", "/usr/local/include", "/opt/homebrew/include"].contains { include in
        ["leveldb/c.h", "rocksdb/c.h", "lmdb.h"].allSatisfy { FileManager.default.fileExists(atPath: include + "/" + $0) }
    }

let package = Package(
    name: "WALStoreBenchmarks",
    // `Synchronization.Mutex` (used for the threads' error box) is macOS 15+.
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "walstore-bench", targets: ["WALStoreBench"]),
        .executable(name: "walstore-datastore-bench", targets: ["DataStoreBench"]),
        .executable(name: "walstore-migration-bench", targets: ["MigrationBench"]),
        .executable(name: "walstore-history-bench", targets: ["HistoryBench"]),
        .executable(name: "walstore-open-probe", targets: ["OpenProbe"]),
        .executable(name: "walstore-context-bench", targets: ["ContextBench"]),
    ],
    dependencies: [
        .package(name: "WALStore", path: ".."),
    ],
    targets: [
        // SQLite 3 from Debian's libsqlite3-dev.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // glibc's <malloc.h> (libc6-dev): mallinfo2() and malloc_trim() for index-memory (Linux).
        .systemLibrary(
            name: "CMalloc",
            providers: [.apt(["libc6-dev"])]
        ),
        // Data, workloads, timing, the table and the WALStore contender, shared by both benches.
        .target(
            name: "BenchSupport",
            dependencies: [
                .product(name: "Engine", package: "WALStore"),
                .target(name: "CMalloc", condition: .when(platforms: [.linux])),
            ]
        ),
        // The SQLite connection and prepared statements both SQLite contenders are built on.
        .target(
            name: "SQLiteSupport",
            dependencies: ["CSQLite"]
        ),
        // A plain C11 reader of one WALStore table file (libc and zlib only): the floor beside
        // walstore-bench's readseq-cached and readrandom-cached rows.
        .target(
            name: "CTableFloor",
            linkerSettings: [.linkedLibrary("z")]
        ),
        // WALStore against SQLite, the physical limit of write(2) + fdatasync, and the C floor of
        // its table format.
        .executableTarget(
            name: "WALStoreBench",
            dependencies: ["BenchSupport", "SQLiteSupport", "CTableFloor"]
        ),
        // A DataStore on SQLite in Core Data's SQLite layout: the DataStore bench's contender.
        .target(
            name: "CoreDataSQLiteStore",
            dependencies: [
                "CSQLite", "SQLiteSupport",
                .product(name: "Snapshot", package: "WALStore"),
            ]
        ),
        // WALDataStore against the Core Data-shaped SQLite store and the whole-file JSON store,
        // on the blog model.
        .executableTarget(
            name: "DataStoreBench",
            dependencies: [
                "BenchSupport", "CoreDataSQLiteStore",
                .product(name: "Engine", package: "WALStore"),
                .product(name: "Snapshot", package: "WALStore"),
                .product(name: "SnapshotTestSupport", package: "WALStore"),
            ]
        ),
        // WALDataStore's schema migrations on the blog model: time, peak memory, extra disk.
        .executableTarget(
            name: "MigrationBench",
            dependencies: [
                .product(name: "Engine", package: "WALStore"),
                .product(name: "Snapshot", package: "WALStore"),
            ]
        ),
        // What WALDataStore's history costs on saves, and what fetchHistory takes.
        .executableTarget(
            name: "HistoryBench",
            dependencies: [
                .product(name: "Engine", package: "WALStore"),
                .product(name: "Snapshot", package: "WALStore"),
            ]
        ),
        // Opens an existing engine store several times, cold or warm, and prints each open's
        // time and what recovery did.
        .executableTarget(
            name: "OpenProbe",
            dependencies: ["BenchSupport", .product(name: "Engine", package: "WALStore")]
        ),
        // What the Models module's StoreContext costs over the bare WALDataStore.
        .executableTarget(
            name: "ContextBench",
            dependencies: [
                .product(name: "Engine", package: "WALStore"),
                .product(name: "Snapshot", package: "WALStore"),
                .product(name: "Models", package: "WALStore"),
            ]
        ),
        // The C floor's table reader against FORMAT.md's worked example and tables the engine wrote.
        .testTarget(
            name: "CTableFloorTests",
            dependencies: ["CTableFloor", .product(name: "Engine", package: "WALStore")]
        ),
        // The Core Data-shaped SQLite store against the DataStore contract suite and its layout.
        .testTarget(
            name: "CoreDataSQLiteStoreTests",
            dependencies: [
                "CoreDataSQLiteStore", "SQLiteSupport",
                .product(name: "Snapshot", package: "WALStore"),
                .product(name: "SnapshotTestSupport", package: "WALStore"),
            ]
        ),
        // WALDataStore and the Core Data-shaped SQLite store run side by side on seeded random
        // request sequences, every result and state compared, a disagreement shrunk to a
        // minimal reproduction (Benchmarks/README.md, "The differential test").
        .testTarget(
            name: "DifferentialTests",
            dependencies: [
                "BenchSupport", "CoreDataSQLiteStore", "SQLiteSupport",
                .product(name: "Snapshot", package: "WALStore"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6],
    cLanguageStandard: .c11
)

if peersInstalled {
    package.products.append(.executable(name: "walstore-peers-bench", targets: ["PeersBench"]))
    package.targets += [
        // The peers' targets name no pkg-config module on purpose: SwiftPM queries pkg-config for
        // every system library in the package whatever product is built, so naming one would make
        // `swift build --product walstore-bench` warn on a machine without the peers installed.
        // Debian puts their headers in /usr/include; each module map links its library.
        //
        // LevelDB's C API (leveldb/c.h) from Debian's libleveldb-dev.
        .systemLibrary(
            name: "CLevelDB",
            providers: [.apt(["libleveldb-dev"])]
        ),
        // RocksDB's C API (rocksdb/c.h) from Debian's librocksdb-dev.
        .systemLibrary(
            name: "CRocksDB",
            providers: [.apt(["librocksdb-dev"])]
        ),
        // LMDB (lmdb.h) from Debian's liblmdb-dev.
        .systemLibrary(
            name: "CLMDB",
            providers: [.apt(["liblmdb-dev"])]
        ),
        // WALStore against LevelDB, RocksDB and LMDB.
        .executableTarget(
            name: "PeersBench",
            dependencies: ["BenchSupport", "CLevelDB", "CRocksDB", "CLMDB"]
        ),
    ]
}
