#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if os(Linux)
import CMalloc
#endif
import Engine
import Foundation

/// `index-memory`'s child process: the bench runs itself again as
/// `<bench> --memory-probe PATH`, and this opens the store at PATH in the fresh process, keeps it
/// open, and prints how much the process's memory grew, on one line of `key=value` pairs.
///
/// A fresh process, because in the bench's own process (gigabytes allocated and freed by the
/// workloads before) an open would reuse freed memory and its growth would say nothing. Both
/// measurements are taken after `malloc_trim(0)`, so memory freed during the open and kept by
/// glibc is not counted; memory still held (the index, fragmentation, thread stacks) is.
///
/// - `rss`: the process's anonymous resident memory (`RssAnon` in `/proc/self/status`): what the
///   operating system charges the process for the open store.
/// - `heap`: glibc's heap in use (`mallinfo2()`: `uordblks` + `hblkhd`), the allocations alone.
public enum MemoryProbe {
    /// The flag that makes the bench a probe.
    public static let flag = "--memory-probe"

    /// What one probe measured.
    public struct Result: Sendable {
        public var keys: Int
        public var openSeconds: Double
        public var rssGrowth: Int
        public var heapGrowth: Int
        /// The engine's own estimate, `statistics.indexBytesPerKey`.
        public var engineEstimate: Int
        /// `statistics.cacheBytes` after the open (the value cache; 0 unless the open fills it).
        public var cacheBytes: Int

        public var rssPerKey: Double { Double(rssGrowth) / Double(max(1, keys)) }
        public var heapPerKey: Double { Double(heapGrowth) / Double(max(1, keys)) }
    }

    /// The probe's `main`: opens `path`, prints the line, returns the exit status.
    public static func run(path: String) -> Int32 {
        do {
            var options = LogStore.Options()
            options.compaction = .manual
            let (rssBefore, heapBefore) = usage()
            let (store, seconds) = try Stopwatch.time { try LogStore.open(at: path, options: options) }
            let (rssAfter, heapAfter) = usage()
            let statistics = store.statistics
            try store.close()
            print("keys=\(statistics.keyCount) seconds=\(seconds) rss=\(rssAfter - rssBefore) heap=\(heapAfter - heapBefore) "
                + "estimate=\(statistics.indexBytesPerKey) cache=\(statistics.cacheBytes)")
            return 0
        } catch {
            FileHandle.standardError.write(Data("memory probe: \(error)\n".utf8))
            return 1
        }
    }

    /// Runs the probe on `path` in a child process (this executable again) and parses its line.
    public static func measure(path: String) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executablePath)
        process.arguments = [flag, path]
        let output = Pipe()
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            throw BenchError("cannot run \(executablePath) \(flag): \(error.localizedDescription)")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw BenchError("\(flag) \(path) exited with status \(process.terminationStatus)")
        }
        var fields: [String: String] = [:]
        for pair in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        guard let keys = fields["keys"].flatMap({ Int($0) }), let seconds = fields["seconds"].flatMap({ Double($0) }),
              let rss = fields["rss"].flatMap({ Int($0) }), let heap = fields["heap"].flatMap({ Int($0) }),
              let estimate = fields["estimate"].flatMap({ Int($0) }), let cache = fields["cache"].flatMap({ Int($0) }) else {
            throw BenchError("\(flag) \(path) printed '\(text)'")
        }
        return Result(keys: keys, openSeconds: seconds, rssGrowth: rss, heapGrowth: heap, engineEstimate: estimate, cacheBytes: cache)
    }

    /// This executable.
    static var executablePath: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// Anonymous resident bytes and heap bytes in use, after returning free memory to the system.
    static func usage() -> (rss: Int, heap: Int) {
        let (_, anonymous, heap) = fullUsage()
        return (anonymous, heap)
    }

    /// Resident bytes (`VmRSS`), anonymous resident bytes (`RssAnon`) and heap bytes in use,
    /// after returning free memory to the system (`malloc_trim(0)`).
    static func fullUsage() -> (resident: Int, anonymous: Int, heap: Int) {
        #if os(Linux)
        malloc_trim(0)
        let info = mallinfo2()
        let heap = Int(info.uordblks) + Int(info.hblkhd)
        #else
        let heap = 0
        #endif
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        return (statusBytes(status, "VmRSS:"), statusBytes(status, "RssAnon:"), heap)
    }

    /// The field `name` (such as `RssAnon:`) of `/proc/self/status`'s text, in bytes (0 where
    /// there is none).
    private static func statusBytes(_ status: String, _ name: String) -> Int {
        for line in status.split(separator: "\n") where line.hasPrefix(name) {
            let number = line.dropFirst(name.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) } ?? 0
            return number * 1024
        }
        return 0
    }
}
