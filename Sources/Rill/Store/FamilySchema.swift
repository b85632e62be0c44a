import Foundation

/// What the catalog keeps of a family of model types that share an entity (`ModelFamily`): the
/// discriminator field, and each kind's own fields — their kinds and which are optional — as
/// its model type reads them. The entity's schema holds the union of the kinds' fields.
package struct FamilySchema: Sendable, Equatable {
    /// One kind: its name (the discriminator's value), its fields' kinds (an object of field name
    /// to kind), and the dotted paths of its optional fields.
    package struct Kind: Sendable, Equatable {
        package var name: String
        package var fields: RecordValue
        package var optional: [String]

        package init(name: String, fields: RecordValue, optional: [String]) {
            self.name = name
            self.fields = fields
            self.optional = optional
        }
    }

    /// The field holding each record's kind name.
    package var discriminator: String
    /// The kinds, in the family's order.
    package var kinds: [Kind]

    package init(discriminator: String, kinds: [Kind]) {
        self.discriminator = discriminator
        self.kinds = kinds
    }

    /// The entity's fields and optional paths: the discriminator (a string every record has),
    /// then every kind's fields. A field some kind lacks is optional; a field two kinds read as
    /// different kinds is `any`.
    var union: (fields: RecordValue, optional: [String]) {
        var fields = [RecordField(name: discriminator, value: .string("string"))]
        var optional: [String] = []
        var counts: [String: Int] = [:]
        for kind in kinds {
            guard case .map(let own) = kind.fields else { continue }
            for field in own {
                counts[field.name, default: 0] += 1
                if let index = fields.firstIndex(where: { $0.name == field.name }) {
                    if fields[index].value != field.value { fields[index].value = .string("any") }
                } else {
                    fields.append(field)
                }
            }
            for path in kind.optional where !optional.contains(path) { optional.append(path) }
        }
        for field in fields.dropFirst() where counts[field.name, default: 0] < kinds.count {
            if !optional.contains(field.name) { optional.append(field.name) }
        }
        return (.map(fields), optional)
    }

    /// `{"discriminator":"kind","kinds":[{"name":…,"fields":{…},"optional":[…]}]}`.
    var jsonValue: RecordValue {
        .map([
            RecordField(name: "discriminator", value: .string(discriminator)),
            RecordField(
                name: "kinds",
                value: .array(
                    kinds.map { kind in
                        .map([
                            RecordField(name: "name", value: .string(kind.name)),
                            RecordField(name: "fields", value: kind.fields),
                            RecordField(name: "optional", value: .array(kind.optional.map { .string($0) })),
                        ])
                    })),
        ])
    }

    init?(json: RecordValue) {
        guard case .map(let fields) = json,
            case .string(let discriminator)? = fields.first(where: { $0.name == "discriminator" })?.value,
            case .array(let values)? = fields.first(where: { $0.name == "kinds" })?.value
        else { return nil }
        var kinds: [Kind] = []
        for value in values {
            guard case .map(let parts) = value,
                case .string(let name)? = parts.first(where: { $0.name == "name" })?.value,
                let kindFields = parts.first(where: { $0.name == "fields" })?.value,
                case .array(let optional)? = parts.first(where: { $0.name == "optional" })?.value
            else { return nil }
            let paths = optional.compactMap { value -> String? in
                if case .string(let path) = value { return path }
                return nil
            }
            kinds.append(Kind(name: name, fields: kindFields, optional: paths))
        }
        self.init(discriminator: discriminator, kinds: kinds)
    }

    /// The kind `record` names in its discriminator, or a problem saying why it names none of
    /// the family's.
    func kind(of record: RecordValue) -> Result<Kind, KindProblem> {
        guard case .map(let fields) = record else { return .failure(KindProblem(text: "it is not a map of fields")) }
        guard case .string(let name)? = fields.first(where: { $0.name == discriminator })?.value else {
            return .failure(KindProblem(text: "its `\(discriminator)` does not name a kind of the family"))
        }
        guard let kind = kinds.first(where: { $0.name == name }) else {
            return .failure(
                KindProblem(
                    text: "its `\(discriminator)` is \"\(name)\", not one of the family's kinds ("
                        + kinds.map(\.name).joined(separator: ", ") + ")"))
        }
        return .success(kind)
    }

    /// Why a record names no kind of the family.
    struct KindProblem: Error {
        var text: String
    }
}
