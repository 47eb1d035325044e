// The libFuzzer driver (Fuzz/README.md):
//
//     walstore-fuzz <target> [libFuzzer flags and corpus directories]
//     walstore-fuzz seeds <directory>     writes the seed corpus, <directory>/<target>/<name>
//     walstore-fuzz list                  names the targets
//
// libFuzzer's own `main` is left out (run.sh links libclang_rt.fuzzer_no_main): this one picks
// the target, then hands the remaining arguments to `LLVMFuzzerRunDriver`.
import EngineFuzzing
import Foundation

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// The target the callback runs; set once, before libFuzzer starts.
nonisolated(unsafe) var selected = FuzzTarget.segment

func usage() -> Never {
    let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
    FileHandle.standardError.write(Data("usage: walstore-fuzz <\(names)> [libFuzzer arguments]\n       walstore-fuzz seeds <directory>\n       walstore-fuzz list\n".utf8))
    exit(2)
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else { usage() }
switch arguments[1] {
case "list":
    for target in FuzzTarget.allCases { print(target.rawValue) }
case "seeds":
    guard arguments.count == 3 else { usage() }
    let root = URL(fileURLWithPath: arguments[2])
    for (target, seeds) in try Seeds.make().sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
        let directory = root.appendingPathComponent(target.rawValue)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for seed in seeds {
            try Data(seed.bytes).write(to: directory.appendingPathComponent("seed-" + seed.name))
            print("\(target.rawValue)/seed-\(seed.name): \(seed.bytes.count) bytes")
        }
    }
default:
    guard let target = FuzzTarget(rawValue: arguments[1]) else { usage() }
    selected = target
    // argv for libFuzzer: the program name, then everything after the target's name.
    var argv: [UnsafeMutablePointer<CChar>?] = ([arguments[0]] + arguments.dropFirst(2)).map { strdup($0) }
    argv.append(nil)
    var argc = Int32(argv.count - 1)
    let status = argv.withUnsafeMutableBufferPointer { buffer in
        var pointer = buffer.baseAddress!
        return LLVMFuzzerRunDriver(&argc, &pointer) { data, count in
            selected.run(data, count: count)
            return 0
        }
    }
    exit(status)
}
