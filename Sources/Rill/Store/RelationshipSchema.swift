/// One relationship of an entity as the catalog keeps it, for code without the model types: the
/// save's transaction keeps the reference index and applies delete rules from it, and
/// `rill schema` shows it.
package struct RelationshipSchema: Sendable, Hashable {
    package enum Kind: String, Sendable, Hashable {
        /// An optional to-one reference: the field holds the target's identifier, or is null.
        case reference
        /// A required to-one reference: the field always holds the target's identifier.
        case requiredReference = "required-reference"
        /// A to-many reference: the field holds an array of the targets' identifiers.
        case references
        /// The inverse of another entity's reference: not stored.
        case inverse
    }

    /// The entity's field (for an inverse, the property that reads it).
    package var field: String
    package var kind: Kind
    /// The other entity: the referenced one, or for an inverse the one holding the reference.
    package var entity: String
    /// For an inverse, the other entity's reference field.
    package var inverseOf: String?
    package var deleteRule: RelationshipDeleteRule

    package var isStored: Bool { kind != .inverse }

    /// `{"field","kind","entity","inverseOf"?,"deleteRule"}`.
    package var jsonValue: RecordValue {
        var fields = [
            RecordField(name: "field", value: .string(field)),
            RecordField(name: "kind", value: .string(kind.rawValue)),
            RecordField(name: "entity", value: .string(entity)),
        ]
        if let inverseOf { fields.append(RecordField(name: "inverseOf", value: .string(inverseOf))) }
        fields.append(RecordField(name: "deleteRule", value: .string(deleteRule.rawValue)))
        return .map(fields)
    }

    package init(field: String, kind: Kind, entity: String, inverseOf: String?, deleteRule: RelationshipDeleteRule) {
        self.field = field
        self.kind = kind
        self.entity = entity
        self.inverseOf = inverseOf
        self.deleteRule = deleteRule
    }

    init?(json: RecordValue) {
        guard case .map(let fields) = json else { return nil }
        func string(_ name: String) -> String? {
            guard case .string(let text)? = fields.first(where: { $0.name == name })?.value else { return nil }
            return text
        }
        guard let field = string("field"), let kind = string("kind").flatMap(Kind.init(rawValue:)),
            let entity = string("entity"),
            let rule = string("deleteRule").flatMap(RelationshipDeleteRule.init(rawValue:))
        else { return nil }
        self.init(field: field, kind: kind, entity: entity, inverseOf: string("inverseOf"), deleteRule: rule)
    }
}
