import Foundation

extension FetchRunner {
    /// The snapshot a format-2 record holds (only the properties in `only`, when given): each
    /// field decoded alone, assets read back, to-many arrays rebuilt when `toMany`.
    func snapshot(of record: RecordReader, primaryKey pk: UUID, root: String, toMany: Bool, only: Set<String>?) throws -> DefaultSnapshot {
        let entity = record.entityName
        let fields = mapper.layout.recordFields(of: entity)
        guard record.fieldCount <= fields.count else {
            throw RecordDecodingError("a record of \(record.fieldCount) fields, more than the \(fields.count) of \(entity)", key: record.key)
        }
        let id = try mapper.identifier(entity: entity, primaryKey: pk)
        var values: [String: PropertyValue] = Dictionary(minimumCapacity: fields.count)
        for field in fields.fields {
            if let only, !only.contains(field.name) { continue }
            guard record.isAsset(field.index) else {
                values[field.name] = try record.value(of: field, storeIdentifier: mapper.storeIdentifier)
                continue
            }
            guard case .attribute(let attribute) = field.kind else {
                throw RecordDecodingError("the to-one \(field.name) marked as held in an asset", key: record.key)
            }
            let key = RecordKeys.asset(root: root, primaryKey: pk, attribute: attribute.name)
            guard let bytes = try mapper.engine.value(forKey: key) else { throw RecordDecodingError("the asset it names is missing", key: record.key) }
            if attribute.valueType == .data {
                values[field.name] = .data(Data(bytes))
            } else {
                var reader = ByteReader(bytes, key: key)
                values[field.name] = try FieldValueCoding.decode(&reader)
                guard reader.isAtEnd else { throw reader.failure("bytes after an asset's value") }
            }
        }
        if toMany {
            for case .relationship(let r) in schema.allProperties(of: entity) where r.isToMany {
                if let only, !only.contains(r.name) { continue }
                values[r.name] = .toMany(try mapper.targets(of: id, through: r))
            }
        }
        return DefaultSnapshot(persistentIdentifier: id, values: values)
    }
}
