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

extension [RecordField] {
    /// The value of the field named `name`, nil when there is none.
    ///
    /// A walk by index: `first(where:)` copies each field it passes (its name and value
    /// retained, then released), and a sort reads its keys at every comparison of two rows.
    package func value(named name: String) -> RecordValue? {
        var index = startIndex
        while index < endIndex {
            if self[index].name == name { return self[index].value }
            index += 1
        }
        return nil
    }
}

extension RecordValue {
    /// This map with `fields` set: each replaces the field of its name or is appended; a null
    /// value removes the field instead. Other values are returned as they are.
    package func settingFields(_ fields: [RecordField]) -> RecordValue {
        guard case .map(var current) = self else { return self }
        for field in fields {
            let index = current.firstIndex { $0.name == field.name }
            switch (index, field.value) {
            case (let index?, .null): current.remove(at: index)
            case (let index?, _): current[index].value = field.value
            case (nil, .null): break
            case (nil, _): current.append(field)
            }
        }
        return .map(current)
    }
}
