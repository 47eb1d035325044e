#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// What the harness does to a store's files from the outside: measure them and push them out of
/// the OS page cache.
public enum StoreFiles {
    /// The regular files directly in (and, for nested stores, under) `directory`.
    public static func files(in directory: String) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: directory) else { return [] }
        var result: [String] = []
        while let name = enumerator.nextObject() as? String {
            let path = directory + "/" + name
            var info = stat()
            if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG { result.append(path) }
        }
        return result
    }

    /// The sum of the sizes (`st_size`) of every file in `directory`, or of those whose name ends
    /// with `suffix`.
    public static func bytesOnDisk(_ directory: String, suffix: String = "") -> UInt64 {
        files(in: directory).filter { $0.hasSuffix(suffix) }.reduce(0) { total, path in
            var info = stat()
            return stat(path, &info) == 0 ? total + UInt64(info.st_size) : total
        }
    }

    /// Copies the closed store at `source` to the new directory `destination` and syncs every
    /// copied file, so that no writeback of the copy is left for a timed part to pay.
    public static func copyStore(from source: String, to destination: String) throws {
        do {
            try FileManager.default.copyItem(atPath: source, toPath: destination)
        } catch {
            throw BenchError("cannot copy \(source) to \(destination): \(error.localizedDescription)")
        }
        for path in files(in: destination) {
            let fd = open(path, O_RDONLY)
            guard fd >= 0 else { throw BenchError("cannot open \(path): \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            guard fdatasync(fd) == 0 else { throw BenchError("fdatasync \(path): \(String(cString: strerror(errno)))") }
        }
    }

    /// Drops every file in `directory` from the OS page cache: `fdatasync` (only clean pages
    /// can be dropped), then `posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)`.
    public static func dropPageCache(_ directory: String) throws {
        for path in files(in: directory) {
            let fd = open(path, O_RDONLY)
            guard fd >= 0 else {
                throw BenchError("cannot open \(path) to drop its pages: \(String(cString: strerror(errno)))")
            }
            defer { close(fd) }
            _ = fdatasync(fd)
            #if os(Linux)
            let status = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_DONTNEED))
            guard status == 0 else {
                throw BenchError("posix_fadvise(\(path)) failed: \(String(cString: strerror(status)))")
            }
            #endif
        }
    }
}
