import BenchSupport
import Foundation

/// Runs this executable again for one part and one contender (`--child PART --contender X
/// --dir D`), and reads back the figures it prints on its last line.
enum ChildProcess {
    /// What starts the result line on standard output.
    static let marker = "DATASTORE-BENCH-RESULT "

    static func run(_ part: String, _ kind: ContenderKind, directory: String, options: HarnessOptions) throws -> [StoreFigure] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executablePath)
        process.arguments = ["--child", part, "--contender", kind.flag, "--dir", directory] + options.scaleArguments + (options.quick ? ["--quick"] : [])
        let output = Pipe()
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            throw BenchError("cannot run \(executablePath) --child \(part): \(error.localizedDescription)")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError("--child \(part) --contender \(kind.flag) exited with status \(process.terminationStatus)")
        }
        let text = String(decoding: data, as: UTF8.self)
        guard let line = text.split(separator: "\n").last(where: { $0.hasPrefix(marker) }) else {
            throw BenchError("--child \(part) --contender \(kind.flag) printed no result")
        }
        return try JSONDecoder().decode([StoreFigure].self, from: Data(line.dropFirst(marker.count).utf8))
    }

    /// This executable.
    private static var executablePath: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }
}
