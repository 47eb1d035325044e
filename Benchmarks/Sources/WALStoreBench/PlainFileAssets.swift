#if canImport(Glibc)
import Glibc
#endif
import BenchSupport

/// The physical limit of `assets`: the same blobs stored the way a careful app stores a file it
/// must not lose, one file per blob: `write(2)` to a temporary name, `fsync` of the file, `rename`
/// to the final name, `fsync` of the directory. Read back the way WALStore's reads are measured:
/// `read(2)` in 1 MiB chunks into one buffer (stream, and again with the page cache dropped), and
/// `mmap` of the whole file (map), each compared with what was written (`memcmp`). Only the
/// writes and reads are timed, not making the bytes.
enum PlainFileAssets {
    /// The size of the read buffer: WALStore's blob chunk.
    static let chunkSize = 1 << 20

    /// One repetition of `assets` in a new directory under the scratch directory.
    static func measure(in context: RunContext) throws -> [Measurement] {
        let directory = context.scratch.newStorePath("plain-assets")
        defer { ScratchDirectory.delete(directory) }
        try ScratchDirectory.create(directory)
        try ScratchDirectory.prewarm(directory, bytes: AssetGroup.all(context.sizes).reduce(0) { $0 + $1.totalBytes })
        var parts: [Measurement] = []
        for group in AssetGroup.all(context.sizes) {
            let before = StoreFiles.bytesOnDisk(directory)
            var seconds = 0.0
            for index in 0..<group.count {
                let blob = group.blob(index)
                let path = directory + "/" + group.name(index)
                seconds += try Stopwatch.time { try write(blob, to: path, in: directory) }.seconds
            }
            let stored = StoreFiles.bytesOnDisk(directory) - before
            parts.append(Measurement(part: group.part(.write), group.sample(seconds: seconds, bytesOnDisk: stored)))

            for step in [AssetGroup.Step.stream, .map, .streamCold] {
                var seconds = 0.0
                for index in 0..<group.count {
                    let expected = group.blob(index)
                    let path = directory + "/" + group.name(index)
                    if step == .streamCold { try StoreFiles.dropPageCache(directory) }
                    seconds += try Stopwatch.time {
                        step == .map ? try readMapped(path, expected) : try readStreamed(path, expected)
                    }.seconds
                }
                parts.append(Measurement(part: group.part(step), group.sample(seconds: seconds, bytesOnDisk: stored)))
            }
        }
        return parts
    }

    /// Writes `bytes` durably as the file at `path`: temporary file, fsync, rename, fsync of
    /// `directory`.
    private static func write(_ bytes: [UInt8], to path: String, in directory: String) throws {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw failure("open", temporary) }
        do {
            try PhysicalLimit.writeAll(fd, bytes, path: temporary)
            guard fsync(fd) == 0 else { throw failure("fsync", temporary) }
        } catch {
            close(fd)
            throw error
        }
        guard close(fd) == 0 else { throw failure("close", temporary) }
        guard rename(temporary, path) == 0 else { throw failure("rename", path) }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else { throw failure("open", directory) }
        defer { close(directoryFD) }
        guard fsync(directoryFD) == 0 else { throw failure("fsync", directory) }
    }

    /// Reads the file at `path` in chunks of ``chunkSize``, comparing each with `expected`.
    private static func readStreamed(_ path: String, _ expected: [UInt8]) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure("open", path) }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        var offset = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("read", path)
            }
            if count == 0 { break }
            guard buffer.withUnsafeBytes({ AssetGroup.matches(UnsafeRawBufferPointer(rebasing: $0[0..<count]), expected, at: offset) }) else {
                throw BenchError("\(path) reads back other bytes at \(offset)")
            }
            offset += count
        }
        guard offset == expected.count else { throw BenchError("\(path) has \(offset) bytes, not \(expected.count)") }
    }

    /// Maps the file at `path` and compares it with `expected`.
    private static func readMapped(_ path: String, _ expected: [UInt8]) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure("open", path) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure("fstat", path) }
        let length = Int(info.st_size)
        guard length == expected.count else { throw BenchError("\(path) has \(length) bytes, not \(expected.count)") }
        guard length > 0 else { return }
        guard let address = mmap(nil, length, PROT_READ, MAP_PRIVATE, fd, 0), address != MAP_FAILED else {
            throw failure("mmap", path)
        }
        defer { munmap(address, length) }
        guard AssetGroup.matches(UnsafeRawBufferPointer(start: address, count: length), expected, at: 0) else {
            throw BenchError("\(path) reads back other bytes")
        }
    }

    /// The error of a failed system call, with `errno` in words.
    private static func failure(_ call: String, _ path: String) -> BenchError {
        BenchError("\(call) \(path): \(String(cString: strerror(errno)))")
    }
}
