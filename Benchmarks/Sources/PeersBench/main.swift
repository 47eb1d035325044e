#if canImport(Glibc)
import Glibc
#endif
import BenchSupport

/// `walstore-peers-bench`: WALStore against LevelDB, RocksDB and LMDB through their C APIs, on
/// the same seeded data and workloads as `walstore-bench`. See `Benchmarks/README.md`.

let peers = ["LevelDB", "RocksDB", "LMDB"]

let bench = BenchDescription(
    tool: "walstore-peers-bench",
    title: "walstore-peers-bench: WALStore vs LevelDB \(LevelDBContender.version), RocksDB and LMDB \(LMDBContender.version)",
    available: Workload.allCases.filter { $0 != .fillsyncConcurrent && !$0.usesEngineAPI },
    defaults: [.fillseq, .fillbatch100, .fillsync, .overwrite, .readrandomWarm, .readseq, .delete],
    references: peers,
    legend: [
        "contenders: WALStore default options (durable); LevelDB and RocksDB default options, sync writes "
            + "(one write batch per commit); LMDB default durable flags, one transaction per batch",
    ],
    versions: ["LevelDB": LevelDBContender.version, "LMDB": LMDBContender.version],
    makeContenders: { data in
        [
            WALStoreContender(),
            LevelDBContender(),
            RocksDBContender(),
            LMDBContender(rawBytes: data.rawBytes),
        ]
    },
    notes: { _, _ in
        ["RocksDB version (from its OPTIONS file): \(RocksDBContender.version ?? "unknown")"]
    })

exit(BenchMain.run(bench, arguments: Array(CommandLine.arguments.dropFirst())))
