import Foundation
import Snapshot
import SQLiteSupport

/// `Z_PRIMARYKEY`, `Z_METADATA` and `Z_MODELCACHE`: made with the tables when the database is
/// new, read and checked when it is not.
enum CoreDataMetadata {
    /// The store's UUID: read from `Z_METADATA`, or made with every table in one transaction.
    static func loadOrCreate(_ database: SQLiteDatabase, layout: CoreDataLayout, schema: Schema) throws -> String {
        let exists = try database.text("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'Z_METADATA'") == "1"
        if exists {
            guard let uuid = try database.text("SELECT Z_UUID FROM Z_METADATA WHERE Z_VERSION = 1"), !uuid.isEmpty else {
                throw ColumnValues.damaged("no store UUID in Z_METADATA")
            }
            let model = try database.prepare("SELECT Z_CONTENT FROM Z_MODELCACHE")
            defer { database.forget(model) }
            guard try model.step(), let data = model.data(0), let stored = try? JSONDecoder().decode(Schema.self, from: data) else {
                throw ColumnValues.damaged("no readable model in Z_MODELCACHE")
            }
            guard stored == schema else {
                throw DataStoreError(
                    .invalidSchema, "The database was made with another schema; open it with that schema or erase it (migration is not implemented).")
            }
            return uuid
        }
        let uuid = UUID().uuidString
        try database.execute("BEGIN IMMEDIATE")
        do {
            try database.execute("CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
            try database.execute("CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
            try database.execute("CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")
            for sql in layout.statements { try database.execute(sql) }
            let primaryKey = try database.prepare("INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, 0, 0)")
            defer { database.forget(primaryKey) }
            for (number, name) in layout.entityNames.sorted(by: { $0.key < $1.key }) {
                try primaryKey.bind(Int64(number), at: 1)
                try primaryKey.bind(name, at: 2)
                try primaryKey.run()
            }
            let plist: [String: Any] = [
                "NSStoreType": "SQLite", "NSStoreUUID": uuid, "NSPersistenceFrameworkVersion": 1518,
                "NSPersistenceMaximumFrameworkVersion": 1518, "NSStoreModelVersionHashesVersion": 3, "_NSAutoVacuumLevel": "2",
                "NSStoreModelVersionIdentifiers": [""],
            ]
            let metadata = try database.prepare("INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)")
            defer { database.forget(metadata) }
            try metadata.bind(uuid, at: 1)
            try metadata.bind(try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0), at: 2)
            try metadata.run()
            let model = try database.prepare("INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)")
            defer { database.forget(model) }
            try model.bind(try JSONEncoder().encode(schema), at: 1)
            try model.run()
            try database.execute("COMMIT")
        } catch {
            try? database.execute("ROLLBACK")
            throw error
        }
        return uuid
    }
}
