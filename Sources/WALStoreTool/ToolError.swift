import Foundation
import Engine
import Snapshot

/// The tool's exit codes (docs/tool.md, "Exit codes").
enum ExitCode: Int32 {
    /// Done; for `verify`, nothing wrong.
    case ok = 0
    /// Done, and problems were found: `verify` found damage or disagreeing entries, `salvage`
    /// found damage (and repaired it), `get` found no such key.
    case problems = 1
    /// Bad usage: an unknown command, flag or missing argument.
    case usage = 2
    /// The store is open in another process (or this one).
    case locked = 3
    /// The store is damaged where open cannot tell it from a torn write: run `walstore salvage`.
    case corrupt = 4
    /// The path is missing, is a file, or is a directory that holds no store (nothing was made in it).
    case notAStore = 5
    /// Refused: the destination is not new or empty, or the import's input does not fit.
    case refused = 6
    /// Any other failure: I/O, an unsupported format version, a store that is no WALDataStore
    /// where the command needs one.
    case failed = 7

    var name: String {
        switch self {
        case .ok: "ok"
        case .problems: "problems"
        case .usage: "usage"
        case .locked: "locked"
        case .corrupt: "corrupt"
        case .notAStore: "notAStore"
        case .refused: "refused"
        case .failed: "failed"
        }
    }
}

/// A failure the tool reports and exits with.
struct ToolError: Error {
    var exitCode: ExitCode
    var message: String
    /// The file concerned, when known.
    var path: String?
    /// The byte offset concerned, when known.
    var offset: UInt64?

    init(_ exitCode: ExitCode, _ message: String, path: String? = nil, offset: UInt64? = nil) {
        self.exitCode = exitCode
        self.message = message
        self.path = path
        self.offset = offset
    }

    static func usage(_ message: String) -> ToolError { ToolError(.usage, message) }

    /// `error` as the tool reports it: an exit code, and words saying what to do next.
    static func from(_ error: any Error) -> ToolError {
        switch error {
        case let error as ToolError:
            return error
        case let error as EngineError:
            return from(engine: error)
        case let error as DataStoreError:
            if let cause = error.underlying as? EngineError { return from(engine: cause) }
            switch error.code {
            case .locked: return ToolError(.locked, "the store is open in another process: \(error.message)")
            case .notAStore: return ToolError(.notAStore, error.message)
            case .corrupted: return ToolError(.corrupt, shellWords("\(error.message); walstore salvage STORE repairs it"))
            default: return ToolError(.failed, shellWords(error.message))
            }
        case let error as CloudKitTransferError:
            let code: ExitCode =
                switch error.code {
                case .destinationNotEmpty, .notAnExport, .invalidRecord, .recordTooLarge, .unsendableValue: .refused
                case .unreadableRecord: .corrupt
                default: .failed
                }
            var message = error.message
            if let recordName = error.recordName { message += " (record \(recordName))" }
            return ToolError(code, message, path: error.path)
        case let error as StoreInspectionError:
            return ToolError(.failed, error.message)
        default:
            return ToolError(.failed, "\(error)")
        }
    }

    /// `message` in a shell user's words: the engine's advice, which names Swift API, replaced by
    /// the tool's commands.
    static func shellWords(_ message: String) -> String {
        message
            .replacingOccurrences(of: EngineError.salvageAdvice, with: salvageAdvice)
            .replacingOccurrences(of: "salvage it (LogStore.salvage(at:))", with: "repair it with walstore salvage STORE")
            .replacingOccurrences(of: "salvage the store (LogStore.salvage(at:))", with: "repair it with walstore salvage STORE")
            .replacingOccurrences(of: "; " + EngineError.otherFilesAdvice, with: "; give the directory of a store")
            .replacingOccurrences(of: " (creation is .never); pass .ifMissing to make one", with: "; give the directory of a store")
    }

    /// What the tool says to do about damage.
    static let salvageAdvice =
        "run walstore verify STORE to see the damage, then walstore salvage STORE, which keeps every intact commit and moves the damaged bytes to quarantine/"

    static func from(engine error: EngineError) -> ToolError {
        let code: ExitCode
        var message = shellWords(error.message)
        switch error.code {
        case .locked:
            code = .locked
            message = "the store is open in another process (its LOCK file is held); close that program first"
        case .corruption, .missingBlob:
            code = .corrupt
        case .notFound, .notAStore:
            code = .notAStore
        case .invalidArgument:
            code = .usage
        default:
            code = .failed
            if let call = error.systemCall { message += " (\(call)" + (error.errno.map { " errno \($0)" } ?? "") + ")" }
        }
        return ToolError(code, message, path: error.path, offset: error.offset)
    }
}
