import Dispatch
import Foundation

/// The run's private temporary directory (`<parent>/walstore-bench.XXXXXX`): every store the
/// run creates lives under it, and ``remove()`` deletes it all at the end.
public final class ScratchDirectory {
    /// The directory's path.
    public let path: String
    private var nextNumber = 0
    /// The SIGINT and SIGTERM handlers that remove the directory (kept alive with it).
    private var signalSources: [any DispatchSourceSignal] = []

    /// Creates a fresh directory under `parent` with `mkdtemp`.
    public init(under parent: String) throws {
        var template = Array((parent.hasSuffix("/") ? parent : parent + "/").utf8CString.dropLast())
        template.append(contentsOf: "walstore-bench.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw BenchError("cannot create a temporary directory under \(parent): \(String(cString: strerror(errno)))")
        }
        path = String(cString: made)
    }

    /// Removes the directory when the process is interrupted (SIGINT, SIGTERM), then exits with
    /// 128 + the signal's number, so that Ctrl-C leaves nothing behind either.
    public func removeOnInterrupt() {
        let path = self.path
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                Self.delete(path)
                FileHandle.standardError.write(Data("interrupted: removed \(path)\n".utf8))
                exit(128 + number)
            }
            source.resume()
            signalSources.append(source)
        }
    }

    /// A path for a new store directory (not created: the stores create their own), unique
    /// within the run.
    public func newStorePath(_ label: String) -> String {
        nextNumber += 1
        let safe = String(label.map { $0.isLetter || $0.isNumber ? $0 : "-" })
        return "\(path)/\(nextNumber)-\(safe)"
    }

    /// Creates the directory at `path` (for stores that want it to exist before opening).
    public static func create(_ path: String) throws {
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
            throw BenchError("cannot create \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Deletes the store directory at `path` and everything in it.
    public static func delete(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Deletes the scratch directory and everything in it.
    public func remove() {
        Self.delete(path)
    }
}
