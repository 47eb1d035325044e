/// The history's bookkeeping, stored under ``RecordKeys/historyMeta`` (FORMAT.md, "History"):
/// a version byte (1), then three tokens, 8 bytes big-endian each.
///
/// Tokens below ``horizon`` are expired: their transactions were deleted (by
/// ``WALDataStore/deleteHistory(_:)``, retention, an erase, or a session without history), and a
/// fetch after one of them could not be complete. Records from ``floor`` up to ``horizon`` may
/// still be on disk; they are invisible and deleted a chunk at a time.
struct HistoryState: Equatable {
    static let version: UInt8 = 1

    /// The token of the newest transaction (0: none yet).
    var last: UInt64 = 0
    /// The first token kept.
    var horizon: UInt64 = 1
    /// The first token whose record may still be on disk (`floor <= horizon`).
    var floor: UInt64 = 1

    /// Whether tokens up to ``last`` are all expired and no record is left to delete.
    var isSettled: Bool { horizon == last + 1 && floor == horizon }

    func encoded() -> [UInt8] {
        var out: [UInt8] = [Self.version]
        out.appendBigEndian(last)
        out.appendBigEndian(horizon)
        out.appendBigEndian(floor)
        return out
    }

    init() {}

    init(decoding bytes: [UInt8]) throws(RecordDecodingError) {
        var reader = ByteReader(bytes, key: RecordKeys.historyMeta)
        let version = try reader.byte()
        guard version == Self.version else { throw reader.failure("history state version \(version), expected \(Self.version)") }
        last = try reader.bigEndian64()
        horizon = try reader.bigEndian64()
        floor = try reader.bigEndian64()
        guard reader.isAtEnd, floor <= horizon, horizon >= 1, horizon <= last &+ 1, last < UInt64.max else {
            throw reader.failure("a history state whose tokens are out of order")
        }
    }
}
