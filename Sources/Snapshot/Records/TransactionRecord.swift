import Engine
import Foundation

/// The records of a save spread over several stores (FORMAT.md, "Records (the Snapshot
/// layer)", transaction records): a **prepared** record in each participant store that holds
/// the participant's whole engine batch, and a **committed** record in the coordinator store
/// whose presence decides the save.
package enum TransactionRecord {
    /// The tag byte of transaction records: `X`.
    package static let tag: UInt8 = 0x58
    /// `X` `P`: every prepared record of a store.
    package static let preparedPrefix: [UInt8] = [tag, 0x50]
    /// `X` `C`: every committed record of a store.
    package static let committedPrefix: [UInt8] = [tag, 0x43]

    /// `X` `P` transaction(16).
    package static func preparedKey(_ transaction: UUID) -> [UInt8] { preparedPrefix + RecordKeys.bytes(of: transaction) }
    /// `X` `C` transaction(16).
    package static func committedKey(_ transaction: UUID) -> [UInt8] { committedPrefix + RecordKeys.bytes(of: transaction) }

    /// The transaction a prepared or committed key names.
    package static func transaction(inKey key: [UInt8]) throws(RecordDecodingError) -> UUID {
        guard key.count == 18, key[0] == tag, key[1] == 0x50 || key[1] == 0x43 else {
            throw RecordDecodingError("a malformed transaction record key", key: key)
        }
        return RecordKeys.uuid(from: Array(key[2...]))
    }

    /// A participant's part of a save: the store that coordinates it and the batch to commit
    /// once the coordinator holds the committed record.
    package struct Prepared: Sendable, Equatable {
        /// The identifier of the coordinator store.
        package var coordinator: String
        /// The participant's batch, operation by operation.
        package var entries: [WriteBatch.Entry]

        package init(coordinator: String, entries: [WriteBatch.Entry]) {
            self.coordinator = coordinator
            self.entries = entries
        }

        /// `01`, coordinator (varint length + UTF-8), entry count (varint), entries: `01` key
        /// value (put), `02` key value (put as a blob), `03` key (delete); keys and values are
        /// varint length + bytes.
        package var encoded: [UInt8] {
            var bytes: [UInt8] = [1]
            bytes.appendLengthPrefixed(Array(coordinator.utf8))
            bytes.appendVarint(UInt64(entries.count))
            for entry in entries {
                switch entry {
                case let .put(key, value):
                    bytes.append(1)
                    bytes.appendLengthPrefixed(key)
                    bytes.appendLengthPrefixed(value)
                case let .putExternal(key, value):
                    bytes.append(2)
                    bytes.appendLengthPrefixed(key)
                    bytes.appendLengthPrefixed(value)
                case .delete(let key):
                    bytes.append(3)
                    bytes.appendLengthPrefixed(key)
                }
            }
            return bytes
        }

        /// Decodes ``encoded``; refuses an unknown version or kind, a bad length and trailing
        /// bytes.
        package init(decoding bytes: [UInt8], key: [UInt8]) throws(RecordDecodingError) {
            var reader = ByteReader(bytes, key: key)
            guard try reader.byte() == 1 else { throw reader.failure("an unknown prepared-record version") }
            coordinator = try reader.string()
            let count = try reader.varint()
            guard count <= UInt64(reader.remaining) else { throw reader.failure("\(count) entries in \(reader.remaining) bytes") }
            entries = []
            for _ in 0..<count {
                let kind = try reader.byte()
                let entryKey = try reader.take(try reader.length())
                switch kind {
                case 1: entries.append(.put(key: entryKey, value: try reader.take(try reader.length())))
                case 2: entries.append(.putExternal(key: entryKey, value: try reader.take(try reader.length())))
                case 3: entries.append(.delete(key: entryKey))
                default: throw reader.failure("an unknown entry kind \(kind)")
                }
            }
            guard !coordinator.isEmpty, reader.isAtEnd else { throw reader.failure("a malformed prepared record") }
        }
    }

    /// The coordinator's decision: the save is committed; the participants are named.
    package struct Committed: Sendable, Equatable {
        /// The identifiers of the other participant stores.
        package var participants: [String]

        package init(participants: [String]) { self.participants = participants }

        /// `01`, participant count (varint), identifiers (varint length + UTF-8 each).
        package var encoded: [UInt8] {
            var bytes: [UInt8] = [1]
            bytes.appendVarint(UInt64(participants.count))
            for p in participants { bytes.appendLengthPrefixed(Array(p.utf8)) }
            return bytes
        }

        /// Decodes ``encoded``.
        package init(decoding bytes: [UInt8], key: [UInt8]) throws(RecordDecodingError) {
            var reader = ByteReader(bytes, key: key)
            guard try reader.byte() == 1 else { throw reader.failure("an unknown committed-record version") }
            let count = try reader.varint()
            guard count <= UInt64(reader.remaining) else { throw reader.failure("\(count) participants in \(reader.remaining) bytes") }
            participants = []
            for _ in 0..<count { participants.append(try reader.string()) }
            guard reader.isAtEnd else { throw reader.failure("trailing bytes") }
        }
    }
}
