import Foundation

extension RecordMatcher {
    /// What the matcher compiled from `predicate` for `entity` answers on the format-2 record
    /// `bytes` of primary key `primaryKey` (`nil`: undecided on the bytes), for tests that
    /// compare it with ``PredicateEvaluator``.
    package static func answer(
        _ predicate: FetchPredicate, schema: Schema, entity: String, record bytes: [UInt8], primaryKey: UUID, storeIdentifier: String
    ) throws -> Bool? {
        let evaluator = PredicateEvaluator(schema: schema) { _ in nil }
        let matcher = RecordMatcher(
            predicate, entity: entity, fields: RecordFieldList(schema: schema, entity: entity), evaluator: evaluator, storeIdentifier: storeIdentifier
        )
        return try bytes.withUnsafeBytes { raw in
            try matcher.matches(
                try RecordView(raw, key: UnsafeRawBufferPointer(start: nil, count: 0), buffer: RecordSlotBuffer(capacity: 64)), primaryKey: primaryKey
            )
        }
    }
}
