import Foundation

/// A reader of one format-2 record value: parses the header when made (the version, the
/// concrete entity's name, one serial type per field and where each body lies) and decodes a
/// field only when asked, so field *i* is read without decoding the fields before it.
///
/// Every malformed header (a wrong version, a header size past the end, a reserved serial type,
/// bodies that do not fill the record exactly) throws ``RecordDecodingError`` when the reader
/// is made; a body that does not fit its field's type throws when that field is decoded.
package struct RecordReader: StoredRecord {
    /// The record format version this reader reads.
    package static let version: UInt8 = 2

    /// The record's bytes, as stored.
    package let bytes: [UInt8]
    /// The key the record is stored under (named in errors).
    package let key: [UInt8]
    /// Where the concrete entity's name lies in ``bytes``.
    package let entityNameRange: Range<Int>
    /// The concrete entity's name.
    package let entityName: String
    private let slots: [RecordSlot]

    /// Parses the header of `bytes` (stored under `key`).
    package init(_ bytes: [UInt8], key: [UInt8]) throws(RecordDecodingError) {
        let parsed = bytes.withUnsafeBytes { raw in
            Result { () throws(RecordDecodingError) -> ([RecordSlot], Range<Int>) in
                var parser = try RecordHeaderParser(raw)
                var slots: [RecordSlot] = []
                // Every serial type takes a byte at least: one allocation holds them all (up to
                // 64; a longer header grows the array as it is read).
                slots.reserveCapacity(min(parser.serialTypeBytesLeft, 64))
                while let slot = try parser.next() { slots.append(slot) }
                try parser.finish()
                return (slots, parser.entityNameRange)
            }
        }
        let (slots, nameRange) = try parsed.mapError { $0.naming(key) }.get()
        guard let name = String(validating: bytes[nameRange], as: UTF8.self) else {
            throw RecordDecodingError("an entity name that is not UTF-8 at byte \(nameRange.lowerBound)", key: key)
        }
        self.bytes = bytes
        self.key = key
        self.entityNameRange = nameRange
        self.entityName = name
        self.slots = slots
    }

    /// The concrete entity's name as its UTF-8 bytes.
    package var entityNameBytes: ArraySlice<UInt8> { bytes[entityNameRange] }

    /// How many fields the record holds (fewer than its entity has when the entity gained
    /// fields after it was written).
    package var fieldCount: Int { slots.count }

    /// The serial type of field `i` (`0 ..< fieldCount`).
    package func serialType(_ i: Int) -> UInt64 { slots[i].serialType }

    /// Where field `i`'s body lies in ``bytes`` (`0 ..< fieldCount`).
    package func bodyRange(_ i: Int) -> Range<Int> { slots[i].start..<slots[i].end }

    /// Field `i`'s body bytes.
    package func body(_ i: Int) -> ArraySlice<UInt8> { bytes[slots[i].start..<slots[i].end] }

    package func withBody<Result>(
        _ i: Int, _ body: (UnsafeRawBufferPointer) throws(RecordDecodingError) -> Result
    ) throws(RecordDecodingError) -> Result {
        let range = slots[i].start..<slots[i].end
        let outcome = bytes.withUnsafeBytes { raw in
            Swift.Result { () throws(RecordDecodingError) in try body(UnsafeRawBufferPointer(rebasing: raw[range])) }
        }
        return try outcome.get()
    }

    package var errorKey: [UInt8] { key }
}

/// One field's place in a format-2 record: its serial type and where its body lies.
package struct RecordSlot {
    var serialType: UInt64
    var start: Int
    var end: Int
}

/// The header of a format-2 record (FORMAT.md, "Record value, version 2") read in place, one
/// serial type at a time: the version, the header's size, the concrete entity's name, then
/// each field's serial type, whose body size places the next body. Every read is bounds-checked
/// and throws ``RecordDecodingError`` (with an empty key: the caller names it) rather than
/// trapping.
struct RecordHeaderParser {
    private let bytes: UnsafeRawBufferPointer
    /// Where the next serial type starts.
    private var offset: Int
    private let headerEnd: Int
    /// Where the next field's body starts.
    private var bodyOffset: Int
    /// Where the concrete entity's name lies.
    let entityNameRange: Range<Int>
    /// How many serial types were read.
    private(set) var count = 0

    init(_ bytes: UnsafeRawBufferPointer) throws(RecordDecodingError) {
        self.bytes = bytes
        var offset = 0
        guard bytes.count > 0 else { throw Self.failure("unexpected end", at: 0) }
        let version = bytes[0]
        offset = 1
        guard version == RecordReader.version else {
            throw Self.failure("record format version \(version), expected \(RecordReader.version)", at: offset)
        }
        let headerSize = try Self.length(bytes, &offset)
        let headerEnd = offset + headerSize
        let nameCount = try Self.length(bytes, &offset)
        guard nameCount > 0, offset + nameCount <= headerEnd else {
            throw Self.failure("an entity name of \(nameCount) bytes in a header of \(headerSize)", at: offset)
        }
        entityNameRange = offset..<(offset + nameCount)
        self.offset = offset + nameCount
        self.headerEnd = headerEnd
        bodyOffset = headerEnd
    }

    /// The bytes of serial types left: a bound on the fields left (each takes a byte at least).
    var serialTypeBytesLeft: Int { headerEnd - offset }

    /// The next field's place, or `nil` after the last.
    mutating func next() throws(RecordDecodingError) -> RecordSlot? {
        guard offset < headerEnd else { return nil }
        let serialType = try Self.varint(bytes, &offset)
        guard offset <= headerEnd else { throw Self.failure("a serial type past the header's end", at: offset) }
        guard let size = RecordSerialType.bodySize(serialType) else { throw Self.failure("the reserved serial type \(serialType)", at: offset) }
        guard size <= UInt64(bytes.count - bodyOffset) else {
            throw Self.failure("field \(count) of \(size) bytes with \(bytes.count - bodyOffset) left", at: offset)
        }
        let slot = RecordSlot(serialType: serialType, start: bodyOffset, end: bodyOffset + Int(size))
        bodyOffset += Int(size)
        count += 1
        return slot
    }

    /// Checks, after the last serial type, that the bodies fill the record exactly.
    func finish() throws(RecordDecodingError) {
        guard bodyOffset == bytes.count else { throw Self.failure("\(bytes.count - bodyOffset) bytes after the last field's body", at: offset) }
    }

    private static func failure(_ reason: String, at offset: Int) -> RecordDecodingError {
        RecordDecodingError("\(reason) at byte \(offset)", key: [])
    }

    private static func varint(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) throws(RecordDecodingError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < bytes.count else { throw failure("unexpected end", at: offset) }
            let b = bytes[offset]
            offset += 1
            guard shift < 64 else { throw failure("a varint longer than 10 bytes", at: offset) }
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
        }
    }

    /// A varint length, checked against what is left.
    private static func length(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) throws(RecordDecodingError) -> Int {
        let n = try varint(bytes, &offset)
        guard n <= UInt64(bytes.count - offset) else { throw failure("a length of \(n) with \(bytes.count - offset) bytes left", at: offset) }
        return Int(n)
    }
}

extension RecordDecodingError {
    /// This error, naming `key` (the parser's and the field decoder's errors name none).
    func naming(_ key: [UInt8]) -> RecordDecodingError {
        var named = self
        named.key = key
        return named
    }
}

/// A format-2 record whose header has been parsed: ``RecordReader`` (over its own copy of the
/// bytes) or ``RecordView`` (over bytes the engine lends). Its fields are decoded one at a
/// time, only when asked.
package protocol StoredRecord {
    /// How many fields the record holds (fewer than its entity has when the entity gained
    /// fields after it was written).
    var fieldCount: Int { get }
    /// The serial type of field `i` (`0 ..< fieldCount`).
    func serialType(_ i: Int) -> UInt64
    /// Lends field `i`'s body (`0 ..< fieldCount`) to `body`.
    func withBody<Result>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws(RecordDecodingError) -> Result) throws(RecordDecodingError) -> Result
    /// The key the record is stored under, for errors.
    var errorKey: [UInt8] { get }
}

extension StoredRecord {
    /// Whether field `i` is held in its asset (serial type 11); `false` past the last field.
    package func isAsset(_ i: Int) -> Bool { i < fieldCount && serialType(i) == RecordSerialType.asset }

    /// Whether field `i` is null (serial type 0, or a field the record does not hold).
    package func isNull(_ i: Int) -> Bool { i >= fieldCount || serialType(i) == RecordSerialType.null }

    /// The value of field `field` of this record: decoded under the field's type, the
    /// attribute's default (or null) for a field past the record's last, and a to-one as the
    /// identifier of its target in the store `storeIdentifier`.
    ///
    /// - Throws: ``RecordDecodingError`` when the body does not fit the field's type, or the
    ///   field is held in an asset (read the asset instead: ``isAsset(_:)``).
    package func value(of field: RecordField, storeIdentifier: String) throws -> PropertyValue {
        switch field.kind {
        case .attribute(let attribute):
            guard field.index < fieldCount else { return attribute.defaultValue ?? .null }
            return try value(field.index, as: attribute.valueType)
        case .toOne:
            guard let (entity, pk) = try toOneTarget(field.index) else { return .toOne(nil) }
            return .toOne(try PersistentIdentifier.identifier(for: storeIdentifier, entityName: entity, primaryKey: pk))
        }
    }

    /// The target of the to-one field `i`: its concrete entity and primary key, or `nil` when
    /// the field is null (or past the record's last).
    package func toOneTarget(_ i: Int) throws(RecordDecodingError) -> (entity: String, primaryKey: UUID)? {
        guard i < fieldCount else { return nil }
        let serialType = serialType(i)
        if serialType == RecordSerialType.null { return nil }
        do {
            return try withBody(i) { body throws(RecordDecodingError) in
                guard RecordSerialType.isBytes(serialType), body.count > 16 else {
                    throw RecordFieldDecoding.failure(i, serialType, "a to-one that is not a primary key and an entity name")
                }
                guard let entity = String(validating: UnsafeRawBufferPointer(rebasing: body[16...]), as: UTF8.self) else {
                    throw RecordFieldDecoding.failure(i, serialType, "a to-one whose entity name is not UTF-8")
                }
                return (entity, RecordKeys.uuid(from: UnsafeRawBufferPointer(rebasing: body[..<16])))
            }
        } catch {
            throw error.naming(errorKey)
        }
    }

    /// Field `i` decoded as a value of `type` (null for serial type 0).
    ///
    /// - Throws: ``RecordDecodingError`` when `i` is not a field of the record, the field is
    ///   held in an asset, or its serial type or body does not fit `type`.
    package func value(_ i: Int, as type: Schema.Attribute.ValueType) throws(RecordDecodingError) -> PropertyValue {
        guard i >= 0, i < fieldCount else {
            throw RecordFieldDecoding.failure(i, 0, "a field the record does not hold (it has \(fieldCount))").naming(errorKey)
        }
        let serialType = serialType(i)
        do {
            return try withBody(i) { body throws(RecordDecodingError) in
                try RecordFieldDecoding.value(i, serialType: serialType, body: body, as: type)
            }
        } catch {
            throw error.naming(errorKey)
        }
    }
}

/// Decoding one field's body under its type: what ``StoredRecord`` reads with. Errors name the
/// field and no key (the record names its key).
enum RecordFieldDecoding {
    static func failure(_ i: Int, _ serialType: UInt64, _ reason: String) -> RecordDecodingError {
        RecordDecodingError("field \(i) (serial type \(serialType)): \(reason)", key: [])
    }

    /// Field `i`'s value of `type`, from its serial type and body.
    static func value(
        _ i: Int, serialType: UInt64, body: UnsafeRawBufferPointer, as type: Schema.Attribute.ValueType
    ) throws(RecordDecodingError) -> PropertyValue {
        if serialType == RecordSerialType.null { return .null }
        if serialType == RecordSerialType.asset { throw failure(i, serialType, "a value held in an asset, read as inline") }
        func mismatch() -> RecordDecodingError { failure(i, serialType, "a body that is not a \(type)") }
        func text() throws(RecordDecodingError) -> String {
            guard RecordSerialType.isText(serialType) else { throw mismatch() }
            guard let s = String(validating: body, as: UTF8.self) else { throw failure(i, serialType, "text that is not UTF-8") }
            return s
        }
        func bytesBody() throws(RecordDecodingError) -> UnsafeRawBufferPointer {
            guard RecordSerialType.isBytes(serialType) else { throw mismatch() }
            return body
        }
        func bits(_ expected: UInt64) throws(RecordDecodingError) -> UInt64 {
            guard serialType == expected else { throw mismatch() }
            return body.reduce(0) { $0 << 8 | UInt64($1) }
        }
        func signed() throws(RecordDecodingError) -> Int64 {
            guard serialType >= RecordSerialType.int8Bytes, serialType <= RecordSerialType.zero else { throw mismatch() }
            guard let first = body.first else { return 0 }
            var v: Int64 = Int64(Int8(bitPattern: first))
            for b in body.dropFirst() { v = v << 8 | Int64(b) }
            return v
        }
        func unsigned() throws(RecordDecodingError) -> UInt64 {
            guard serialType >= RecordSerialType.int8Bytes, serialType <= RecordSerialType.zero else { throw mismatch() }
            return body.reduce(0) { $0 << 8 | UInt64($1) }
        }
        func exactly<T: FixedWidthInteger>(_ v: some BinaryInteger, _: T.Type) throws(RecordDecodingError) -> T {
            guard let t = T(exactly: v) else { throw failure(i, serialType, "an integer out of the range of \(type)") }
            return t
        }
        switch type {
        case .bool:
            switch serialType {
            case RecordSerialType.false: return .bool(false)
            case RecordSerialType.true: return .bool(true)
            default: throw mismatch()
            }
        case .int: return .int(try exactly(try signed(), Int.self))
        case .int8: return .int8(try exactly(try signed(), Int8.self))
        case .int16: return .int16(try exactly(try signed(), Int16.self))
        case .int32: return .int32(try exactly(try signed(), Int32.self))
        case .int64: return .int64(try signed())
        case .uint: return .uint(try exactly(try unsigned(), UInt.self))
        case .uint8: return .uint8(try exactly(try unsigned(), UInt8.self))
        case .uint16: return .uint16(try exactly(try unsigned(), UInt16.self))
        case .uint32: return .uint32(try exactly(try unsigned(), UInt32.self))
        case .uint64: return .uint64(try unsigned())
        case .float: return .float(Float(bitPattern: UInt32(truncatingIfNeeded: try bits(RecordSerialType.float))))
        case .double: return .double(Double(bitPattern: try bits(RecordSerialType.double)))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try bits(RecordSerialType.double))))
        case .uuid:
            guard serialType == RecordSerialType.uuid else { throw mismatch() }
            return .uuid(RecordKeys.uuid(from: body))
        case .string: return .string(try text())
        case .url:
            guard let url = URL(string: try text()) else { throw failure(i, serialType, "text that is not a URL") }
            return .url(url)
        case .decimal:
            let s = try text()
            if s == "NaN" { return .decimal(Decimal.nan) }
            guard let d = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")) else {
                throw failure(i, serialType, "text that is not a decimal")
            }
            return .decimal(d)
        case .data: return .data(Data(try bytesBody()))
        case .codable(let typeName): return .codable(typeName: typeName, encoded: Data(try bytesBody()))
        case .array:
            var reader = ByteReader(Array(try bytesBody()), key: [])
            let value = try FieldValueCoding.decode(&reader)
            guard case .array = value else { throw failure(i, serialType, "an array field holding a \(value.caseName)") }
            guard reader.isAtEnd else { throw failure(i, serialType, "\(reader.remaining) bytes after an array's value") }
            return value
        }
    }
}
