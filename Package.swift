// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "WALStore",
    products: [
        .library(name: "Engine", targets: ["Engine"]),
        .executable(name: "walstore-example", targets: ["WALStoreExample"]),
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
        .executableTarget(
            name: "WALStoreExample",
            dependencies: ["Engine"]
        ),
        // A child process for the lock test: tries to open a store and reports by exit code.
        .executableTarget(
            name: "walstore-lock-probe",
            dependencies: ["Engine"],
            path: "Tests/LockProbe"
        ),
        .testTarget(
            name: "EngineTests",
            dependencies: ["Engine", "EngineTestSupport", "walstore-lock-probe"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
