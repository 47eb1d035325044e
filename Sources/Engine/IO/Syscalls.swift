#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Every system call the engine makes lives here. `EINTR` is retried here and nowhere else, short
/// reads and writes are continued here, and `errno` becomes an ``EngineError`` here.
enum Syscall {
    /// The `errno` values the engine tells apart from other failures.
    static let noSuchFile = ENOENT
    static let noSpace = ENOSPC

    static func fail(_ call: String, _ path: String, offset: UInt64? = nil) -> EngineError {
        let code = errno
        let text = String(cString: strerror(code))
        let kind: EngineError.Code = (code == EWOULDBLOCK && call == "flock") ? .locked : .io
        return EngineError(kind, "\(call) failed: \(text)", path: path, offset: offset, systemCall: call, errno: code)
    }

    static func openFile(_ path: String, flags: Int32, mode: mode_t = 0o644) throws(EngineError) -> Int32 {
        while true {
            let fd = open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return fd }
            if errno != EINTR { throw fail("open", path) }
        }
    }

    static func closeFile(_ fd: Int32) {
        // close(2) must not be retried on EINTR on Linux: the descriptor is already released.
        _ = close(fd)
    }

    /// Reads up to `count` bytes at `offset`, continuing short reads until `count` or end of file.
    static func readAt(_ fd: Int32, count: Int, at offset: UInt64, path: String) throws(EngineError) -> [UInt8] {
        var failure: EngineError?
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            while done < count {
                let n = pread(fd, buffer.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if n > 0 { done += n; continue }
                if n == 0 { break }
                if errno == EINTR { continue }
                failure = fail("pread", path, offset: offset + UInt64(done))
                break
            }
            initialized = done
        }
        if let failure { throw failure }
        return bytes
    }

    /// Reads into `buffer` from `offset` until it is full or the file ends, continuing short
    /// reads; returns the bytes read.
    static func readAt(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64, path: String) throws(EngineError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let n = pread(fd, base + done, buffer.count - done, off_t(offset) + off_t(done))
            if n > 0 { done += n; continue }
            if n == 0 { break }
            if errno == EINTR { continue }
            throw fail("pread", path, offset: offset + UInt64(done))
        }
        return done
    }

    /// Writes all of `bytes` at `offset`, continuing short writes.
    static func writeAt(_ fd: Int32, _ bytes: [UInt8], at offset: UInt64, path: String) throws(EngineError) {
        var failure: EngineError?
        bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let n = pwrite(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
                if n > 0 { done += n; continue }
                if n < 0 && errno == EINTR { continue }
                if n == 0 { errno = EIO }
                failure = fail("pwrite", path, offset: offset + UInt64(done))
                return
            }
        }
        if let failure { throw failure }
    }

    /// Flushes a file's data (and the metadata needed to read it) to stable storage.
    static func syncData(_ fd: Int32, path: String) throws(EngineError) {
        #if canImport(Darwin)
            // Plain fsync does not flush an Apple SSD's write cache; F_FULLFSYNC does.
            while fcntl(fd, F_FULLFSYNC) != 0 {
                if errno != EINTR { throw fail("fcntl(F_FULLFSYNC)", path) }
            }
        #else
            while fdatasync(fd) != 0 {
                if errno != EINTR { throw fail("fdatasync", path) }
            }
        #endif
    }

    static func syncAll(_ fd: Int32, path: String) throws(EngineError) {
        #if canImport(Darwin)
            try syncData(fd, path: path)
        #else
            while fsync(fd) != 0 {
                if errno != EINTR { throw fail("fsync", path) }
            }
        #endif
    }

    static func size(_ fd: Int32, path: String) throws(EngineError) -> UInt64 {
        UInt64(try status(fd, path: path).st_size)
    }

    /// How many directory entries name the file (`st_nlink`).
    static func linkCount(_ fd: Int32, path: String) throws(EngineError) -> UInt64 {
        UInt64(try status(fd, path: path).st_nlink)
    }

    private static func status(_ fd: Int32, path: String) throws(EngineError) -> stat {
        var info = stat()
        while fstat(fd, &info) != 0 {
            if errno != EINTR { throw fail("fstat", path) }
        }
        return info
    }

    static func truncate(_ fd: Int32, to size: UInt64, path: String) throws(EngineError) {
        while ftruncate(fd, off_t(size)) != 0 {
            if errno != EINTR { throw fail("ftruncate", path, offset: size) }
        }
    }

    static func renameFile(_ from: String, _ to: String) throws(EngineError) {
        while rename(from, to) != 0 {
            if errno != EINTR { throw fail("rename", from) }
        }
    }

    static func removeFile(_ path: String) throws(EngineError) {
        while unlink(path) != 0 {
            if errno != EINTR { throw fail("unlink", path) }
        }
    }

    /// Creates a directory; false when it already exists.
    static func makeDirectory(_ path: String) throws(EngineError) -> Bool {
        while mkdir(path, 0o755) != 0 {
            if errno == EEXIST { return false }
            if errno != EINTR { throw fail("mkdir", path) }
        }
        return true
    }

    static func listDirectory(_ path: String) throws(EngineError) -> [String] {
        guard let dir = opendir(path) else { throw fail("opendir", path) }
        defer { closedir(dir) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(dir) else {
                if errno != 0 && errno != EINTR { throw fail("readdir", path) }
                if errno == EINTR { continue }
                return names
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { names.append(name) }
        }
    }

    /// Takes an exclusive `flock` without waiting. `flock` locks belong to the open file
    /// description, so a second `open` of the same directory in this process is refused too.
    static func lockExclusive(_ fd: Int32, path: String) throws(EngineError) {
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno != EINTR { throw fail("flock", path) }
        }
    }

    /// Maps `count` bytes of a file read-only and shared. A zero-length file maps to nothing.
    static func map(_ fd: Int32, count: Int, path: String) throws(EngineError) -> UnsafeRawBufferPointer {
        guard count > 0 else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        let address = mmap(nil, count, PROT_READ, MAP_SHARED, fd, 0)
        guard let address, address != MAP_FAILED else { throw fail("mmap", path) }
        return UnsafeRawBufferPointer(start: address, count: count)
    }

    static func unmap(_ region: UnsafeRawBufferPointer) {
        guard let base = region.baseAddress, region.count > 0 else { return }
        _ = munmap(UnsafeMutableRawPointer(mutating: base), region.count)
    }

    /// Sleeps about `microseconds` (an interrupted sleep is simply shorter).
    static func pause(microseconds: Int) {
        var request = timespec(tv_sec: 0, tv_nsec: microseconds * 1000)
        _ = nanosleep(&request, nil)
    }
}
