// swift-tools-version:6.0
import PackageDescription

/// WALStore's benchmark harness: a sibling package that depends on the engine by path, so that
/// the engine package itself never depends on SQLite or the peer stores.
///
/// - `walstore-bench` needs only zlib (through the engine) and SQLite.
/// - `walstore-peers-bench` also needs LevelDB, RocksDB and LMDB.
let package = Package(
    name: "WALStoreBenchmarks",
    // `Synchronization.Mutex` (used for the threads' error box) is macOS 15+.
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "walstore-bench", targets: ["WALStoreBench"]),
        .executable(name: "walstore-peers-bench", targets: ["PeersBench"]),
        .executable(name: "walstore-datastore-bench", targets: ["DataStoreBench"]),
        .executable(name: "walstore-history-bench", targets: ["HistoryBench"]),
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
        // WALStore against SQLite and the physical limit of write(2) + fdatasync.
        .executableTarget(
            name: "WALStoreBench",
            dependencies: ["BenchSupport", "CSQLite"]
        ),
        // WALDataStore's figures at the DataStore level, on the blog model.
        .executableTarget(
            name: "DataStoreBench",
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
        // WALStore against LevelDB, RocksDB and LMDB.
        .executableTarget(
            name: "PeersBench",
            dependencies: ["BenchSupport", "CLevelDB", "CRocksDB", "CLMDB"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
