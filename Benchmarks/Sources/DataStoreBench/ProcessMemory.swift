import Foundation

/// The process's memory from `/proc/self/status` (Linux; 0 elsewhere).
enum ProcessMemory {
    /// `VmHWM`: the peak resident set, in bytes.
    static var peakResident: Int { field("VmHWM:") }
    /// `VmRSS`: the resident set now, in bytes.
    static var resident: Int { field("VmRSS:") }

    private static func field(_ name: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(name) {
            let number = line.dropFirst(name.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) } ?? 0
            return number * 1024
        }
        return 0
    }
}
