import Glibc

/// The "physical limit" printed beside each write figure: the same bytes the store appends,
/// written with plain `write(2)` to a file opened with `O_APPEND` and made durable with
/// `fdatasync(2)`, with no engine in between (no encoding, compression, checksums or index).
enum PlainLoop {
    /// Appends `appends` writes of `bytesPerAppend` bytes each to a new file at `path`, calling
    /// `fdatasync` after every write, and returns how long the loop took (open excluded). The
    /// file is removed afterwards.
    static func appendAndSync(path: String, appends: Int, bytesPerAppend: Int) throws(SystemCallError) -> Duration {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SystemCallError("open", path) }
        defer {
            close(fd)
            unlink(path)
        }
        // Random bytes, like compressed frames: nothing below us can shrink them.
        var random = SplitMix64(seed: 0x9E37)
        let buffer = (0..<bytesPerAppend).map { _ in UInt8(truncatingIfNeeded: random.next()) }

        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<appends {
            try writeAll(fd, buffer, path: path)
            guard fdatasync(fd) == 0 else { throw SystemCallError("fdatasync", path) }
        }
        return start.duration(to: clock.now)
    }

    /// `write(2)` until every byte of `buffer` is written, retrying short writes and `EINTR`.
    private static func writeAll(_ fd: Int32, _ buffer: [UInt8], path: String) throws(SystemCallError) {
        var done = 0
        while done < buffer.count {
            let written = buffer.withUnsafeBytes { raw in
                write(fd, raw.baseAddress! + done, raw.count - done)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw SystemCallError("write", path)
            }
            done += written
        }
    }
}
