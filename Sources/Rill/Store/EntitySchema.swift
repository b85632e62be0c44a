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
    /// The fields the model's evolution gives a default, for records that lack them.
    package var defaulted: [String] = []
    /// The default of each defaulted field, as a record value (the model's encoding of it): what
    /// readers without the model type (text queries, `rill get`) read in a record that lacks it.
    package var defaults: [String: RecordValue] = [:]
    /// The fields the model's evolution renamed: current name → the name earlier records use.
    package var renamed: [String: String] = [:]
    /// The unique indexes among `indexes`, by catalog name, with what an insert of values another record has does.
    package var unique: [String: UniqueConflictPolicy] = [:]
    /// 1 for the first schema registered, one more for each different one after it.
    package var version: UInt64
    /// For the entity of a family of model types: the discriminator and each kind's fields (the
    /// schema's own fields are their union). Nil for an entity of one model type.
    package var family: FamilySchema?

    package init(kinds: RecordValue, optional: [String], indexes: [String], version: UInt64 = 0) {
        self.kinds = kinds
        self.optional = optional
        self.indexes = indexes
        self.version = version
    }

    /// Whether two schemas say the same, whatever their versions.
    func describesSame(as other: EntitySchema) -> Bool {
        kinds == other.kinds && optional == other.optional && indexes == other.indexes
            && defaulted == other.defaulted && renamed == other.renamed && defaults == other.defaults
            && unique == other.unique && family == other.family
    }

    /// The schema as a schema-less value:
    /// `{"version":N,"fields":{…},"optional":[…],"indexes":[…],"defaulted":[…],"defaults":{…},
    /// "renamed":{…},"unique":{…}}`: `"defaults"` (only when the evolution gives fields a default)
    /// maps each to its value, `"unique"` (only when the model declares unique indexes) each index
    /// to `"upsert"` or `"fail"`; and `"family":{…}` (`FamilySchema.jsonValue`) for a family's entity.
    package var jsonValue: RecordValue {
        var fields: [RecordField] = [
            RecordField(name: "version", value: .uint(version)),
            RecordField(name: "fields", value: kinds),
            RecordField(name: "optional", value: .array(optional.map { .string($0) })),
            RecordField(name: "indexes", value: .array(indexes.map { .string($0) })),
            RecordField(name: "defaulted", value: .array(defaulted.map { .string($0) })),
            RecordField(
                name: "renamed",
                value: .map(
                    renamed.sorted { $0.key < $1.key }.map { RecordField(name: $0.key, value: .string($0.value)) })
            ),
        ]
        // Only a schema whose fields have defaults says so: the schemas kept before read the same.
        if !defaults.isEmpty {
            fields.insert(
                RecordField(
                    name: "defaults",
                    value: .map(defaults.sorted { $0.key < $1.key }.map { RecordField(name: $0.key, value: $0.value) })
                ), at: 5)
        }
        // Only a schema with unique indexes says so: the schemas kept before them read the same.
        if !unique.isEmpty {
            fields.append(
                RecordField(
                    name: "unique",
                    value: .map(
                        unique.sorted { $0.key < $1.key }.map {
                            RecordField(name: $0.key, value: .string($0.value.rawValue))
                        })))
        }
        if let family { fields.append(RecordField(name: "family", value: family.jsonValue)) }
        return .map(fields)
    }

    init?(json: RecordValue) {
        guard case .map(let fields) = json else { return nil }
        func field(_ name: String) -> RecordValue? { fields.value(named: name) }
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
        if case .array(let names)? = field("defaulted") { defaulted = strings(names) ?? [] }
        if case .map(let pairs)? = field("defaults") {
            for pair in pairs { defaults[pair.name] = pair.value }
        }
        if case .map(let pairs)? = field("renamed") {
            for pair in pairs { if case .string(let old) = pair.value { renamed[pair.name] = old } }
        }
        if case .map(let pairs)? = field("unique") {
            for pair in pairs {
                if case .string(let name) = pair.value, let policy = UniqueConflictPolicy(rawValue: name) {
                    unique[pair.name] = policy
                }
            }
        }
        if let value = field("family") {
            guard let family = FamilySchema(json: value) else { return nil }
            self.family = family
        }
    }
}

extension EntitySchema {
    /// What is wrong with `record` (a stored record of the entity) for a model of this schema:
    /// a field it reads that the record lacks (and that is not optional, defaulted or renamed
    /// from a name the record has), or a value of another kind than the field's. Empty when
    /// the record reads.
    package func problems(of record: RecordValue) -> [String] {
        if let family {
            // A record of a family is held to the fields of the kind it names.
            switch family.kind(of: record) {
            case .failure(let problem): return [problem.text]
            case .success(let kind):
                var schema = EntitySchema(kinds: kind.fields, optional: kind.optional, indexes: indexes)
                (schema.defaulted, schema.renamed, schema.defaults) = (defaulted, renamed, defaults)
                return schema.problems(of: record)
            }
        }
        // Read as the model reads it: nested fields added or renamed, too.
        let record = RecordEvolution(schema: self)?.evolve(record) ?? record
        guard case .map(let kindFields) = kinds, case .map(let fields) = record else {
            return ["it is not a map of fields"]
        }
        var problems: [String] = []
        let optionalPaths = Set(optional).union(defaulted)
        for kindField in kindFields {
            let value = fields.value(named: kindField.name)
            switch value {
            case nil, .null?:
                // Defaulted and renamed fields are named by their path's text (`FieldPath`).
                let text = FieldPath.text(of: [kindField.name])
                let renamedFrom = renamed[text]
                if optionalPaths.contains(kindField.name) || defaulted.contains(text)
                    || renamedFrom.map({ old in fields.contains { $0.name == old } }) == true
                {
                    continue
                }
                problems.append(
                    "it lacks `\(kindField.name)`, which the model reads (not optional, no default declared)")
            case let value?:
                problems += Self.mismatches(value, kindField.value, path: kindField.name, optional: optionalPaths)
            }
        }
        return problems
    }

    private static func mismatches(
        _ value: RecordValue, _ kind: RecordValue, path: String, optional: Set<String>
    )
        -> [String]
    {
        switch (kind, value) {
        case (.string("any"), _), (_, .null): return []
        case (.string(let name), _):
            return accepts(name, value) ? [] : ["`\(path)` holds \(kindName(value)), not \(name)"]
        case (.array(let elements), .array(let values)):
            guard let element = elements.first else { return [] }
            for (index, item) in values.enumerated() {
                let found = mismatches(item, element, path: "\(path)[\(index)]", optional: optional)
                if !found.isEmpty { return found }
            }
            return []
        case (.map(let kindFields), .map(let fields)):
            var found: [String] = []
            for kindField in kindFields {
                let inner = path + "." + kindField.name
                guard let value = fields.first(where: { $0.name == kindField.name })?.value, value != .null else {
                    if !optional.contains(inner) { found.append("it lacks `\(inner)`, which the model reads") }
                    continue
                }
                found += mismatches(value, kindField.value, path: inner, optional: optional)
            }
            return found
        default:
            return ["`\(path)` holds \(kindName(value)), not what the model reads"]
        }
    }

    private static func accepts(_ kind: String, _ value: RecordValue) -> Bool {
        switch (kind, value) {
        case ("int", .int), ("uint", .uint), ("double", .double), ("float", .float), ("string", .string),
            ("bool", .bool), ("date", .date), ("uuid", .uuid), ("url", .url), ("data", .data), ("decimal", .decimal):
            return true
        case ("int", .uint(let number)): return number <= UInt64(Int64.max)
        case ("uint", .int(let number)): return number >= 0
        default: return false
        }
    }

    private static func kindName(_ value: RecordValue) -> String {
        switch value {
        case .bool: "a bool"
        case .int, .uint: "an integer"
        case .float: "a float"
        case .double: "a double"
        case .string: "a string"
        case .data: "data"
        case .date: "a date"
        case .uuid: "a UUID"
        case .url: "a URL"
        case .decimal: "a decimal"
        case .array: "an array"
        case .map: "a map"
        case .null: "null"
        }
    }
}
