#if canImport(Glibc)
import Glibc
#endif
import BenchSupport

/// The plain loop beside a write workload: the same number of syncs as WALStore made, each after
/// writing the bytes WALStore's files grew by per commit, done by a loop of `write(2)` +
/// `fdatasync` on one file, with no format, checksum, compression or index in between. It is a
/// floor for WALStore's own format (what its commits would cost if encoding them were free), not
/// a bound for SQLite, which writes other bytes (pages, a WAL) in another pattern.
///
/// With `preallocated` (the reference column), the file is first zero-filled to its final size
/// and synced (untimed), and the loop overwrites it in place: the timed syncs need not update the
/// file's size, as WALStore's need not, since it zero-fills its active segment ahead of its last
/// frame. Without, the loop appends, and each sync also writes the file's new size.
///
/// For `fillsync-concurrent` this is one sync per commit, like `fillsync`: WALStore's group
/// commit shares syncs between threads, so it can beat this line there.
///
/// For `assets` (when `measuresAssets`) it is plain files instead, one per blob:
/// ``PlainFileAssets``.
struct PhysicalLimit: Contender {
    let name: String
    /// The contender whose sample of the same repetition sets the bytes and syncs.
    let reference: String
    /// Zero-fill the file to its final size before the timed loop, and overwrite it in place.
    let preallocated: Bool
    /// Also run `assets`, on plain files.
    let measuresAssets: Bool

    /// The write workloads; and `assets` when `measuresAssets`.
    func supports(_ workload: Workload) -> Bool {
        workload.writes || (workload == .assets && measuresAssets)
    }

    /// `assets` on plain files (``PlainFileAssets``); every other workload as ``measure(_:in:)``.
    func measureParts(_ workload: Workload, in context: RunContext) throws -> [Measurement] {
        workload == .assets ? try PlainFileAssets.measure(in: context) : [Measurement(try measure(workload, in: context))]
    }

    func measure(_ workload: Workload, in context: RunContext) throws -> Sample {
        guard let model = context.currentRepetition[reference] else {
            throw BenchError("the physical limit needs a \(reference) sample of the same repetition first")
        }
        let bytesPerCommit = max(1, Int(model.bytesPerCommit.rounded()))
        let directory = context.scratch.newStorePath("limit")
        defer { ScratchDirectory.delete(directory) }
        try ScratchDirectory.create(directory)
        let path = directory + "/log"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw BenchError("open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var rng = SplitMix64(seed: 7)
        let buffer = rng.bytes(bytesPerCommit)
        if preallocated {
            let chunk = [UInt8](repeating: 0, count: 1 << 20)
            var remaining = bytesPerCommit * model.commits
            while remaining > 0 {
                try Self.writeAll(fd, Array(chunk.prefix(remaining)), path: path)
                remaining -= min(remaining, chunk.count)
            }
            guard fdatasync(fd) == 0, lseek(fd, 0, SEEK_SET) == 0 else {
                throw BenchError("preallocating \(path): \(String(cString: strerror(errno)))")
            }
        }
        let (_, seconds) = try Stopwatch.time {
            for _ in 0..<model.commits {
                try Self.writeAll(fd, buffer, path: path)
                guard fdatasync(fd) == 0 else { throw BenchError("fdatasync \(path): \(String(cString: strerror(errno)))") }
            }
        }
        return Sample(
            seconds: seconds, operations: model.operations, rawBytes: model.rawBytes,
            bytesOnDisk: StoreFiles.bytesOnDisk(directory), commits: model.commits, bytesPerCommit: Double(bytesPerCommit))
    }

    /// `write(2)` until every byte is written.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws {
        try bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw BenchError("write \(path): \(String(cString: strerror(errno)))")
                }
                offset += written
            }
        }
    }
}
