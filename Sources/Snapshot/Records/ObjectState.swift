import Foundation

/// Where each property of one concrete entity's objects sits in an ``ObjectState``: its record
/// fields first, in field order (slot *i* is field *i*, so an encoder reads it without a name
/// lookup), then its properties without field (ephemeral attributes, to-many relationships), in
/// property order. Worked out once per schema (``RecordLayout/slotTable(of:)``).
final class SlotTable: Sendable {
    /// The property of each slot.
    let names: [String]
    /// How many of the first slots are record fields.
    let fieldCount: Int
    private let indices: [String: Int]

    init(schema: Schema, fieldList: RecordFieldList) {
        var names = fieldList.fields.map(\.name)
        for property in schema.allProperties(of: fieldList.entity) where fieldList.index(of: property.name) == nil {
            names.append(property.name)
        }
        self.names = names
        self.fieldCount = fieldList.count
        self.indices = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The slot of the property `name`; `nil` for a name the entity does not have.
    func index(of name: String) -> Int? { indices[name] }
}

/// One object's values as the save planner and the entity encoders hold them: one optional
/// value per slot of its entity's ``SlotTable`` (`nil`: not stated, or not read), no dictionary.
struct ObjectState {
    let persistentIdentifier: PersistentIdentifier
    var values: Values

    /// The values by slot, read and written by property name through the entity's table.
    struct Values: Sequence {
        let table: SlotTable
        var slots: [PropertyValue?]

        /// The value of the property `name`; `nil` when the state holds none. Setting a name
        /// the entity does not have changes nothing.
        subscript(name: String) -> PropertyValue? {
            get { table.index(of: name).flatMap { slots[$0] } }
            set { if let i = table.index(of: name) { slots[i] = newValue } }
        }

        /// How many properties hold a value.
        var count: Int { slots.count { $0 != nil } }

        /// The properties that hold a value, in slot order.
        func makeIterator() -> Iterator { Iterator(values: self) }

        struct Iterator: IteratorProtocol {
            let values: Values
            var slot = 0
            mutating func next() -> (key: String, value: PropertyValue)? {
                while slot < values.slots.count {
                    defer { slot += 1 }
                    if let value = values.slots[slot] { return (values.table.names[slot], value) }
                }
                return nil
            }
        }
    }

    /// No values yet.
    init(_ id: PersistentIdentifier, table: SlotTable) {
        self.persistentIdentifier = id
        self.values = Values(table: table, slots: Array(repeating: nil, count: table.names.count))
    }

    init(_ id: PersistentIdentifier, table: SlotTable, slots: [PropertyValue?]) {
        self.persistentIdentifier = id
        self.values = Values(table: table, slots: slots)
    }

    /// The values of `snapshot` placed in slots (names the entity does not have are left out).
    init(_ snapshot: DefaultSnapshot, table: SlotTable) {
        self.init(snapshot.persistentIdentifier, table: table)
        for (name, value) in snapshot.values { values[name] = value }
    }

    /// The value of the property `name`; `nil` when the state holds none.
    subscript(name: String) -> PropertyValue? {
        get { values[name] }
        set { values[name] = newValue }
    }

    /// The value of slot `i`.
    func slot(_ i: Int) -> PropertyValue? { values.slots[i] }

    /// The same values as a snapshot by name (an output: for the caller or observers).
    var snapshot: DefaultSnapshot {
        var dictionary: [String: PropertyValue] = Dictionary(minimumCapacity: values.slots.count)
        for (name, value) in values { dictionary[name] = value }
        return DefaultSnapshot(persistentIdentifier: persistentIdentifier, values: dictionary)
    }
}
