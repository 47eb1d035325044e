import Foundation

/// `memory-compacted`'s child process, for any store contender: the bench runs itself again as
/// `<bench> --open-memory-probe CONTENDER PATH KEYHEX LENGTH`, and this opens the store at PATH
/// through that contender in the fresh process, reads the key (checking its value's length),
/// keeps the store open, and prints how much the process's memory grew over the open and the
/// read, on one line of `key=value` pairs.
///
/// Before the measured open the store is opened, read and closed once, not measured, so that the
/// code the open runs for the first time and the libraries' one-time set-up are not counted as
/// the store's memory. Both sides of the growth are taken after `malloc_trim(0)` (``MemoryProbe``
/// says why a fresh process, and what the figures count):
///
/// - `resident`: `VmRSS` of `/proc/self/status`, every resident page (file-backed mapped pages
///   included);
/// - `anonymous`: `RssAnon`, the anonymous pages alone;
/// - `heap`: glibc's heap in use (`mallinfo2()`).
public enum OpenMemoryProbe {
    /// The flag that makes the bench this probe.
    public static let flag = "--open-memory-probe"

    /// What one probe measured.
    public struct Result: Sendable {
        /// Seconds of the measured open plus the read.
        public var seconds: Double
        public var residentGrowth: Int
        public var anonymousGrowth: Int
        public var heapGrowth: Int
    }

    /// The probe's `main`, given the command line after the flag: opens the store, prints the
    /// line, returns the exit status.
    public static func run(_ arguments: [String], contenders: [any Contender]) -> Int32 {
        do {
            guard arguments.count == 4, let key = bytes(hex: arguments[2]), let length = Int(arguments[3]) else {
                throw BenchError("\(flag) needs CONTENDER PATH KEYHEX LENGTH")
            }
            guard let contender = contenders.lazy.compactMap({ $0 as? any StoreContender }).first(where: { $0.name == arguments[0] })
            else { throw BenchError("\(flag): no store contender is named '\(arguments[0])'") }
            let path = arguments[1]
            func openAndRead() throws -> any BenchStore {
                let store = try contender.open(path)
                guard try store.valueLength(key) == length else {
                    try? store.close()
                    throw BenchError("\(flag): \(contender.name) read no value of \(length) bytes for the probe key")
                }
                return store
            }
            try openAndRead().close()
            let before = MemoryProbe.fullUsage()
            let (store, seconds) = try Stopwatch.time { try openAndRead() }
            let after = MemoryProbe.fullUsage()
            try store.close()
            print("seconds=\(seconds) resident=\(after.resident - before.resident) anonymous=\(after.anonymous - before.anonymous) "
                + "heap=\(after.heap - before.heap)")
            return 0
        } catch {
            FileHandle.standardError.write(Data("open memory probe: \(error)\n".utf8))
            return 1
        }
    }

    /// Runs the probe on the store of `contender` at `path` in a child process (this executable
    /// again), reading `probe`'s key, and parses its line.
    public static func measure(contender: String, path: String, probe: Record) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: MemoryProbe.executablePath)
        process.arguments = [flag, contender, path, hex(probe.key), String(probe.value.count)]
        let output = Pipe()
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            throw BenchError("cannot run \(MemoryProbe.executablePath) \(flag): \(error.localizedDescription)")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw BenchError("\(flag) \(contender) \(path) exited with status \(process.terminationStatus)")
        }
        var fields: [String: String] = [:]
        for pair in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        guard let seconds = fields["seconds"].flatMap({ Double($0) }), let resident = fields["resident"].flatMap({ Int($0) }),
              let anonymous = fields["anonymous"].flatMap({ Int($0) }), let heap = fields["heap"].flatMap({ Int($0) }) else {
            throw BenchError("\(flag) \(contender) \(path) printed '\(text)'")
        }
        return Result(seconds: seconds, residentGrowth: resident, anonymousGrowth: anonymous, heapGrowth: heap)
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    static func bytes(hex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var result: [UInt8] = []
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            result.append(byte)
        }
        return result
    }
}
