#if canImport(Glibc)
import Glibc
#endif

extension ScratchDirectory {
    /// Writes `bytes` of zeros to a file in `directory`, syncs it and deletes it, so the writes
    /// measured next land on blocks the disk has held before. On a thin-provisioned virtual disk
    /// (this project's machine) the first write to a never-used block costs about twice a later
    /// one, which made whichever contender ran first in `assets` look twice as slow as the other.
    public static func prewarm(_ directory: String, bytes: Int) throws {
        let path = directory + "/prewarm"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw BenchError("open \(path) failed: errno \(errno)") }
        defer {
            close(fd)
            unlink(path)
        }
        let chunk = [UInt8](repeating: 0, count: 4 << 20)
        var written = 0
        while written < bytes {
            let n = chunk.withUnsafeBytes { write(fd, $0.baseAddress, min($0.count, bytes - written)) }
            guard n > 0 else { throw BenchError("write \(path) failed: errno \(errno)") }
            written += n
        }
        guard fsync(fd) == 0 else { throw BenchError("fsync \(path) failed: errno \(errno)") }
    }
}
