extension RecordKeys {
    /// The history's state: its last token, the first token it keeps, the first whose record
    /// may still be on disk (FORMAT.md, "History").
    static let historyMeta: [UInt8] = [0x00] + Array("history".utf8)
    static let historyTag: UInt8 = 0x48  // H

    /// `H` token (8 bytes big-endian): one transaction.
    static func history(_ token: UInt64) -> [UInt8] {
        var key: [UInt8] = [historyTag]
        key.appendBigEndian(token)
        return key
    }

    /// The token of an `H` key.
    static func historyToken(of key: [UInt8]) throws(RecordDecodingError) -> UInt64 {
        guard key.count == 9, key[0] == historyTag else { throw RecordDecodingError("a malformed history key", key: key) }
        return key.dropFirst().reduce(0) { $0 << 8 | UInt64($1) }
    }
}
