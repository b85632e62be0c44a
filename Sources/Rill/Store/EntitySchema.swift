import Foundation

/// What a model type says its entity's records hold, as the catalog keeps it (`schema:<Entity>` in
/// `meta`): each field's kind (`RecordShape.jsonValue`'s form: `"int"`, `[kind]`, a nested object),
/// the dotted paths of the optional fields, the indexes, and a version that goes up by one each
/// time a model type registers a different schema.
///
/// Written when a model type registers (`ModelContainer`) and its schema differs from the one
/// kept; read by `rill schema` and `GET /v1/schema`. Its kinds are also kept as the entity's
/// declared fields, which writes given as JSON and text queries are checked against, so a field no
/// stored record holds yet (an optional that was always nil) can be written and queried.
package struct EntitySchema: Sendable, Equatable {
    /// The field kinds, an object of field name to kind.
    package var kinds: RecordValue
    /// The dotted paths of the fields that may be absent or null (`Optional` in the model).
    package var optional: [String]
    /// The catalog names of the indexes (`author,title`).
    package var indexes: [String]
    /// 1 for the first schema registered, one more for each different one after it.
    package var version: UInt64

    package init(kinds: RecordValue, optional: [String], indexes: [String], version: UInt64 = 0) {
        self.kinds = kinds
        self.optional = optional
        self.indexes = indexes
        self.version = version
    }

    /// Whether two schemas say the same, whatever their versions.
    func describesSame(as other: EntitySchema) -> Bool {
        kinds == other.kinds && optional == other.optional && indexes == other.indexes
    }

    /// The schema as a schema-less value: `{"version":N,"fields":{…},"optional":[…],"indexes":[…]}`.
    package var jsonValue: RecordValue {
        .map([
            RecordField(name: "version", value: .uint(version)),
            RecordField(name: "fields", value: kinds),
            RecordField(name: "optional", value: .array(optional.map { .string($0) })),
            RecordField(name: "indexes", value: .array(indexes.map { .string($0) })),
        ])
    }

    init?(json: RecordValue) {
        guard case .map(let fields) = json else { return nil }
        func field(_ name: String) -> RecordValue? { fields.first { $0.name == name }?.value }
        guard case .uint(let version)? = field("version"), let kinds = field("fields"),
            case .array(let optional)? = field("optional"), case .array(let indexes)? = field("indexes")
        else { return nil }
        func strings(_ values: [RecordValue]) -> [String]? {
            let strings = values.compactMap { value -> String? in
                if case .string(let text) = value { return text }
                return nil
            }
            return strings.count == values.count ? strings : nil
        }
        guard let optionalNames = strings(optional), let indexNames = strings(indexes) else { return nil }
        self.init(kinds: kinds, optional: optionalNames, indexes: indexNames, version: version)
    }
}
