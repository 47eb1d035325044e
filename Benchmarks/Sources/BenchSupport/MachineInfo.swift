#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The machine a run was made on, for the table's header and the JSON report.
public struct MachineInfo: Sendable, Codable {
    /// Online processor cores.
    public var cores: Int
    /// `uname -srm`: kernel name, release and machine.
    public var kernel: String
    /// The file system type of the scratch directory (ext4, xfs, tmpfs, ...), with "(no journal)"
    /// for an ext4 mounted without one (syncs then skip the journal commit).
    public var fileSystem: String

    /// Describes this machine, with the file system holding `directory`.
    public init(directory: String) {
        cores = ProcessInfo.processInfo.activeProcessorCount
        var names = utsname()
        uname(&names)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
        }
        kernel = "\(field(names.sysname)) \(field(names.release)) \(field(names.machine))"
        fileSystem = Self.fileSystemType(of: directory)
    }

    /// The one line the tables start with.
    public var line: String {
        "machine: \(cores) cores, \(kernel), scratch on \(fileSystem); one run, not a lab measurement"
    }

    /// True when syncs cost nothing there (a RAM file system), which makes durable figures void.
    public var syncIsFree: Bool { fileSystem.hasPrefix("tmpfs") || fileSystem.hasPrefix("ramfs") }

    /// The type of the file system mounted deepest above `path`, from `/proc/mounts` (Linux).
    private static func fileSystemType(of path: String) -> String {
        guard let mounts = try? String(contentsOfFile: "/proc/mounts", encoding: .utf8) else { return "unknown" }
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        var best: (mountPoint: String, device: String, type: String)?
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            // Spaces in mount points are written as \040.
            let mountPoint = fields[1].replacingOccurrences(of: "\\040", with: " ")
            let inside = mountPoint == "/" || resolved == mountPoint || resolved.hasPrefix(mountPoint + "/")
            if inside, mountPoint.count >= (best?.mountPoint.count ?? -1) {
                best = (mountPoint, String(fields[0]), String(fields[2]))
            }
        }
        guard let best else { return "unknown" }
        // ext4 shows its journal thread here, or "<none>" when it has no journal.
        let device = best.device.split(separator: "/").last.map(String.init) ?? ""
        if best.type == "ext4",
           let task = try? String(contentsOfFile: "/sys/fs/ext4/\(device)/journal_task", encoding: .utf8),
           task.hasPrefix("<none>") {
            return "ext4 (no journal)"
        }
        return best.type
    }
}
