import Foundation

/// A format-2 record read in place, from bytes the engine lends (a cached table block or a log
/// block) for the length of one closure: the header is parsed into a slot buffer the reader
/// reuses for every record, and a field's body is a view into the lent bytes. Nothing is
/// allocated or copied to make one, so a fetch tests a record it does not return for the cost
/// of its header and the fields its predicate reads.
///
/// The whole header is checked when the view is made, as ``RecordReader`` checks it (a record
/// malformed anywhere fails the same way on either path); the entity's name is left as bytes,
/// for the caller to compare with the names it expects rather than validate as UTF-8.
///
/// Valid only while its bytes are lent and its slot buffer is not reused: never store one.
package struct RecordView: StoredRecord {
    /// The record's bytes.
    package let bytes: UnsafeRawBufferPointer
    /// The key the record is stored under (copied only for an error).
    package let key: UnsafeRawBufferPointer
    /// The concrete entity's name, as stored (not validated).
    package let entityName: UnsafeRawBufferPointer
    package let fieldCount: Int
    /// The slots parsed, held so that they live as long as the view.
    private let buffer: RecordSlotBuffer

    /// Parses the header of `bytes` (stored under `key`) into `buffer`.
    ///
    /// - Throws: ``RecordDecodingError`` for a malformed header, or one of more fields than
    ///   `buffer` holds (more than any entity of the records read has).
    package init(_ bytes: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, buffer: RecordSlotBuffer) throws(RecordDecodingError) {
        var parser: RecordHeaderParser
        do { parser = try RecordHeaderParser(bytes) } catch { throw error.naming(Array(key)) }
        var count = 0
        do throws(RecordDecodingError) {
            while let slot = try parser.next() {
                guard count < buffer.capacity else {
                    throw RecordDecodingError("a record of more than \(buffer.capacity) fields, more than any entity it may be of has", key: [])
                }
                buffer.slots[count] = slot
                count += 1
            }
            try parser.finish()
        } catch {
            throw error.naming(Array(key))
        }
        self.bytes = bytes
        self.key = key
        entityName = UnsafeRawBufferPointer(rebasing: bytes[parser.entityNameRange])
        fieldCount = count
        self.buffer = buffer
    }

    package func serialType(_ i: Int) -> UInt64 { buffer.slots[i].serialType }

    package func withBody<Result>(
        _ i: Int, _ body: (UnsafeRawBufferPointer) throws(RecordDecodingError) -> Result
    ) throws(RecordDecodingError) -> Result {
        try body(self.body(i))
    }

    /// Field `i`'s body (`0 ..< fieldCount`), in place.
    package func body(_ i: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[buffer.slots[i].start..<buffer.slots[i].end])
    }

    package var errorKey: [UInt8] { Array(key) }

    /// The entity's name as a `String` (for an error or a record of an entity not expected).
    var entityNameString: String { String(decoding: entityName, as: UTF8.self) }
}

/// The slots a ``RecordView`` parses a header into: one allocation, made once per fetch for the
/// most fields any entity read has, reused for every record.
package final class RecordSlotBuffer {
    let capacity: Int
    let slots: UnsafeMutablePointer<RecordSlot>

    package init(capacity: Int) {
        self.capacity = capacity
        slots = UnsafeMutablePointer<RecordSlot>.allocate(capacity: max(capacity, 1))
    }

    deinit { slots.deallocate() }
}
