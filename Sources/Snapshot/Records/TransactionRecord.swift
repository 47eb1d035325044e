import Engine
import Foundation

/// The records of a save spread over several stores (FORMAT.md, "Records (the Snapshot
/// layer)", transaction records): a **prepared** record in each participant store that holds
/// the participant's engine batch, naming each value to be written as a blob by a **staged
/// blob** written beside it (so the bytes are written once), and a **committed** record in the
/// coordinator store whose presence decides the save.
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

    /// `X` `A`: every staged blob of a store (a value of a prepared part written as a blob file).
    package static let stagedBlobPrefix: [UInt8] = [tag, 0x41]

    /// `X` `A` transaction(16) index(4, big-endian): the blob a prepared part's entry `index`
    /// names, written by the prepare commit, handed to its final key when the part commits.
    package static func stagedBlobKey(_ transaction: UUID, _ index: UInt32) -> [UInt8] {
        stagedBlobPrefix + RecordKeys.bytes(of: transaction) + [
            UInt8(index >> 24), UInt8((index >> 16) & 0xFF), UInt8((index >> 8) & 0xFF), UInt8(index & 0xFF),
        ]
    }

    /// One operation of a participant's batch, as its prepared record keeps it.
    package enum PreparedEntry: Sendable, Equatable {
        /// Sets `key` to `value` (kept inline).
        case put(key: [UInt8], value: [UInt8])
        /// Sets `key` to `value`, written as a blob file when the part commits (read from
        /// version-1 records only: this build stages blobs instead).
        case putExternal(key: [UInt8], value: [UInt8])
        /// Removes `key`.
        case delete(key: [UInt8])
        /// Sets `key` to the blob already written under ``TransactionRecord/stagedBlobKey(_:_:)``
        /// of the transaction and `index`, without writing it again.
        case stagedBlob(key: [UInt8], index: UInt32)
    }

    /// A participant's part of a save: the store that coordinates it and the batch to commit
    /// once the coordinator holds the committed record.
    package struct Prepared: Sendable, Equatable {
        /// The identifier of the coordinator store.
        package var coordinator: String
        /// The participant's batch, operation by operation.
        package var entries: [PreparedEntry]

        package init(coordinator: String, entries: [PreparedEntry]) {
            self.coordinator = coordinator
            self.entries = entries
        }

        /// The indices of the staged blobs the entries name.
        package var stagedBlobIndices: [UInt32] {
            entries.compactMap { if case .stagedBlob(_, let index) = $0 { index } else { nil } }
        }

        /// `02`, coordinator (varint length + UTF-8), entry count (varint), entries: `01` key
        /// value (put), `02` key value (put as a blob), `03` key (delete), `04` key index (varint:
        /// the staged blob `X` `A` transaction index); keys and values are varint length + bytes.
        package var encoded: [UInt8] {
            var bytes: [UInt8] = [2]
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
                case let .stagedBlob(key, index):
                    bytes.append(4)
                    bytes.appendLengthPrefixed(key)
                    bytes.appendVarint(UInt64(index))
                }
            }
            return bytes
        }

        /// Decodes ``encoded`` (version 2) and version-1 records (no staged blobs); refuses an
        /// unknown version or kind, a staged blob in a version-1 record, an index over 2³² − 1,
        /// a bad length and trailing bytes.
        package init(decoding bytes: [UInt8], key: [UInt8]) throws(RecordDecodingError) {
            var reader = ByteReader(bytes, key: key)
            let version = try reader.byte()
            guard version == 1 || version == 2 else { throw reader.failure("an unknown prepared-record version \(version)") }
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
                case 4 where version == 2:
                    let index = try reader.varint()
                    guard index <= UInt64(UInt32.max) else { throw reader.failure("a staged blob index \(index) over 2^32 - 1") }
                    entries.append(.stagedBlob(key: entryKey, index: UInt32(index)))
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
