// swift-tools-version:6.0
import PackageDescription

/// WALStore's libFuzzer driver: a sibling package that depends on the engine by path, so that the
/// engine package itself never builds with the fuzzer's flags. Build and run it with `Fuzz/run.sh`
/// (Fuzz/README.md), which adds the sanitizer and coverage flags and links libFuzzer.
let package = Package(
    name: "WALStoreFuzz",
    products: [
        .executable(name: "walstore-fuzz", targets: ["WALStoreFuzz"]),
    ],
    dependencies: [
        .package(name: "WALStore", path: ".."),
    ],
    targets: [
        .executableTarget(
            name: "WALStoreFuzz",
            dependencies: [.product(name: "EngineFuzzing", package: "WALStore")],
            // libFuzzer is C++: its no-main archive (linked by run.sh) needs the C++ library.
            linkerSettings: [.linkedLibrary("stdc++")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
