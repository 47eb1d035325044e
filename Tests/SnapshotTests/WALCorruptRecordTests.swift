import Engine
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// Bytes read back that do not decode give a typed error, never a trap.
@Suite struct WALCorruptRecordTests {
    @Test(arguments: [[UInt8](), [2, 0], [1, 5], [1, 1, 13] + Array("CD_entityName".utf8) + [14, 200], [1, 1, 13] + Array("CD_entityName".utf8) + [14, 4] + Array("Nope".utf8)])
    func aDamagedRecordIsATypedEngineError(_ bytes: [UInt8]) throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        let key = [0x52] + RawRecord.name("Tag") + RawRecord.uuidBytes(UUID())
        try store.engine.write { $0.put(key, bytes) }
        #expect {
            _ = try store.all("Tag")
        } throws: { error in
            guard let e = error as? DataStoreError else { return false }
            return e.code == .corrupted && e.underlying is RecordDecodingError
        }
    }
}
