/// One entry of a `RecordValue.map`: a field name and its value.
package struct RecordField: Hashable, Sendable {
    /// The key the field was stored under.
    package var name: String
    /// The field's value.
    package var value: RecordValue

    /// Creates a field.
    package init(name: String, value: RecordValue) {
        self.name = name
        self.value = value
    }
}
