import Glibc

/// A failed system call in the example's own file handling (the engine reports its own failures
/// as `EngineError`).
struct SystemCallError: Error, CustomStringConvertible {
    var call: String
    var path: String
    var code: Int32

    /// Captures `errno` now, so create it right after the failing call.
    init(_ call: String, _ path: String, code: Int32 = errno) {
        self.call = call
        self.path = path
        self.code = code
    }

    var description: String {
        "\(call)(\(path)) failed: \(String(cString: strerror(code))) (errno \(code))"
    }
}

/// A fresh directory from `mkdtemp(3)`. ``remove()`` unlinks its files and removes it; the
/// directories this program makes hold only files.
struct TemporaryDirectory {
    let path: String

    /// Makes `<parent>/walstore-<label>-XXXXXX`.
    init(under parent: String, label: String) throws(SystemCallError) {
        var template = Array("\(parent)/walstore-\(label)-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer -> String? in
            guard let result = mkdtemp(buffer.baseAddress!) else { return nil }
            return String(cString: result)
        }
        guard let made else { throw SystemCallError("mkdtemp", "\(parent)/walstore-\(label)-XXXXXX") }
        path = made
    }

    /// Unlinks every file in the directory, then the directory. Failures are reported on
    /// standard error, not thrown: this runs from `defer`.
    func remove() {
        do {
            try Self.removeTree(path)
        } catch {
            printError("warning: could not remove \(path): \(error)")
        }
    }

    /// Removes `directory` with its files and subdirectories (a store's `blobs/`).
    private static func removeTree(_ directory: String) throws {
        for name in try fileNames(in: directory) {
            let entry = directory + "/" + name
            if unlink(entry) != 0 {
                guard errno == EISDIR || errno == EPERM else { throw SystemCallError("unlink", entry) }
                try removeTree(entry)
            }
        }
        guard rmdir(directory) == 0 else { throw SystemCallError("rmdir", directory) }
    }
}

/// The names in `directory`, without "." and "..".
func fileNames(in directory: String) throws(SystemCallError) -> [String] {
    guard let stream = opendir(directory) else { throw SystemCallError("opendir", directory) }
    defer { closedir(stream) }
    var names: [String] = []
    while let entry = readdir(stream) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

/// Drops the OS page cache of every `*.wal` segment in `directory`: opens each read-only,
/// `posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)`, closes it. Works on clean pages only, which is
/// all a store has once its commits are synced. Returns how many files it advised.
@discardableResult
func dropPageCache(ofSegmentsIn directory: String) throws(SystemCallError) -> Int {
    var count = 0
    for name in try fileNames(in: directory) where name.hasSuffix(".wal") {
        let path = directory + "/" + name
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemCallError("open", path) }
        defer { close(fd) }
        let result = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)
        guard result == 0 else { throw SystemCallError("posix_fadvise", path, code: result) }
        count += 1
    }
    return count
}
