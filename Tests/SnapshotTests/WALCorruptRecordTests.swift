import Engine
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// Bytes read back that do not decode give a typed error, never a trap: a wrong version, a
/// header past the end, an unknown entity, a reserved serial type, a body past the end, a
/// field of the wrong type.
@Suite struct WALCorruptRecordTests {
    @Test(arguments: [
        [UInt8](), [2, 0], [1, 5], [2, 200], [2, 5, 4] + Array("Nope".utf8), [2, 4, 3] + Array("Tag".utf8) + [12],
        [2, 4, 3] + Array("Tag".utf8) + [6, 0], [2, 5, 3] + Array("Tag".utf8) + [3, 1], [2, 6, 3] + Array("Tag".utf8) + [0, 0, 0],
    ])
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
