import Engine
import Foundation
import Snapshot
import Testing

/// A prepared part of a save across stores (FORMAT.md, "Transaction records"): version 2 names
/// staged blobs instead of holding their bytes; version 1 records are still read.
@Suite struct PreparedRecordTests {
    let key = TransactionRecord.preparedKey(UUID())

    @Test func aVersion2RecordRoundTripsWithStagedBlobs() throws {
        let record = TransactionRecord.Prepared(
            coordinator: "LOCAL",
            entries: [
                .put(key: [0x52, 1], value: [9, 9]), .stagedBlob(key: [0x41, 1], index: 0), .delete(key: [0x49, 2]),
                .stagedBlob(key: [0x41, 2], index: 1),
            ])
        #expect(record.encoded.first == 2)
        #expect(try TransactionRecord.Prepared(decoding: record.encoded, key: key) == record)
        #expect(record.stagedBlobIndices == [0, 1])
    }

    @Test func aVersion1RecordIsStillReadWithItsBlobBytes() throws {
        // 01, "C", 1 entry: 02 key [41 01] value [7 7 7].
        let bytes: [UInt8] = [1, 1, 0x43, 1, 2, 2, 0x41, 1, 3, 7, 7, 7]
        let record = try TransactionRecord.Prepared(decoding: bytes, key: key)
        #expect(record.entries == [.putExternal(key: [0x41, 1], value: [7, 7, 7])])
    }

    @Test(arguments: [
        [1, 1, 0x43, 1, 4, 2, 0x41, 1, 0] as [UInt8],  // a staged blob in a version-1 record
        [2, 1, 0x43, 1, 4, 2, 0x41, 1, 0x80, 0x80, 0x80, 0x80, 0x10],  // an index of 2^32
        [3, 1, 0x43, 0],  // an unknown version
        [2, 1, 0x43, 1, 4, 2, 0x41, 1, 0, 0],  // trailing bytes
    ])
    func aMalformedRecordIsRefused(_ bytes: [UInt8]) {
        #expect(throws: RecordDecodingError.self) { try TransactionRecord.Prepared(decoding: bytes, key: key) }
    }
}
