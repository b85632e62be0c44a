import Rill

/// The schemas of a store's entities, as `rill schema` and `GET /v1/schema` give them
/// (Documentation/Protocol.md, "GET /v1/schema").
package enum SchemaDescription {
    /// One entity: its identifier kind, the schema its model type registered (nil when none
    /// did), and the field kinds writes are checked against (the schema's, an import's
    /// description, or what stored records show).
    package struct Entity: Sendable {
        package var name: String
        package var identifier: String
        package var schema: EntitySchema?
        package var fields: RecordValue
        /// The unique indexes the store enforces (its catalog's, whoever declared them), by name, each with
        /// what an insert of values another record has does.
        package var unique: [(index: String, policy: UniqueConflictPolicy)] = []
        /// The relationships the catalog keeps for the entity: references it stores and inverses.
        package var relationships: [RelationshipSchema] = []
    }

    /// Every entity of `store`, or only `name`.
    ///
    /// - Throws: `RillError(.unknownEntity)` when `name` is not one of the store's entities.
    package static func entities(of store: Store, named name: String? = nil) throws -> [Entity] {
        let names = try name.map { [try store.existingEntity($0).name] } ?? store.entityNames()
        return try names.compactMap { name in
            guard let entity = try store.entity(named: name) else { return nil }
            return Entity(
                name: name, identifier: entity.identifierKind.name, schema: try store.schema(of: name),
                fields: try store.recordShape(of: entity).jsonValue,
                unique: entity.indexes.compactMap { index in index.uniqueness.map { (index.name, $0) } },
                relationships: entity.relationships)
        }
    }

    /// `{"entities":[{"name":…,"identifier":…,"schema":{"version":…,"fields":…,"optional":…,"indexes":…}|null,"fields":…,
    /// "relationships":[{"field","kind","entity","inverseOf"?,"deleteRule"}],"unique":{"email":"upsert"}}]}`.
    package static func json(_ entities: [Entity]) -> RecordValue {
        .map([
            RecordField(
                name: "entities",
                value: .array(
                    entities.map { entity in
                        .map([
                            RecordField(name: "name", value: .string(entity.name)),
                            RecordField(name: "identifier", value: .string(entity.identifier)),
                            RecordField(name: "schema", value: entity.schema?.jsonValue ?? .null),
                            RecordField(name: "fields", value: entity.fields),
                            RecordField(name: "relationships", value: .array(entity.relationships.map(\.jsonValue))),
                            RecordField(
                                name: "unique",
                                value: .map(
                                    entity.unique.map {
                                        RecordField(name: $0.index, value: .string($0.policy.rawValue))
                                    }
                                )),
                        ])
                    }))
        ])
    }

    /// Lines for a person: each entity, its version, then each field with its kind (`?` when
    /// optional), then its indexes, then its unique indexes with their policies, and for a
    /// family's entity its discriminator and each kind's fields.
    package static func lines(_ entities: [Entity]) -> [String] {
        var lines: [String] = []
        for entity in entities {
            if !lines.isEmpty { lines.append("") }
            if let schema = entity.schema {
                lines.append("\(entity.name) (\(entity.identifier) identifiers), schema version \(schema.version)")
            } else {
                lines.append(
                    "\(entity.name) (\(entity.identifier) identifiers), no schema registered by a model type: "
                        + "the fields declared or seen in records")
            }
            let optional = Set(entity.schema?.optional ?? [])
            guard case .map(let fields) = entity.schema?.kinds ?? entity.fields else { continue }
            let width = fields.map(\.name.count).max() ?? 0
            for field in fields {
                let mark = optional.contains(field.name) ? "?" : ""
                let padding = String(repeating: " ", count: width - field.name.count)
                lines.append(
                    "  \(field.name)\(padding)  \(describe(field.value, path: field.name, optional: optional))\(mark)")
            }
            if let indexes = entity.schema?.indexes, !indexes.isEmpty {
                lines.append("  indexes: " + indexes.map { "(\($0))" }.joined(separator: " "))
            }
            for relationship in entity.relationships { lines.append("  " + describe(relationship)) }
            if !entity.unique.isEmpty {
                lines.append(
                    "  unique: "
                        + entity.unique.map { "(\($0.index)) on conflict \($0.policy.rawValue)" }.joined(
                            separator: ", "))
            }
            if let family = entity.schema?.family {
                lines.append("  family: the kind in `\(family.discriminator)`, one of")
                for kind in family.kinds {
                    let names: [String]
                    if case .map(let fields) = kind.fields { names = fields.map(\.name) } else { names = [] }
                    lines.append("    \(kind.name): " + names.joined(separator: ", "))
                }
            }
        }
        return lines
    }

    /// A relationship as a person reads it: `recipe -> Recipe (reference)`, `ingredients <- Ingredient.recipe
    /// (inverse, on delete cascade)`.
    private static func describe(_ relationship: RelationshipSchema) -> String {
        let kind: String
        switch relationship.kind {
        case .reference: kind = "reference"
        case .requiredReference: kind = "required reference"
        case .references: kind = "to-many reference"
        case .inverse: kind = "inverse"
        }
        let target =
            relationship.kind == .inverse
            ? "<- \(relationship.entity).\(relationship.inverseOf ?? "")" : "-> \(relationship.entity)"
        let rule = relationship.deleteRule == .nullify ? "" : ", on delete \(relationship.deleteRule.rawValue)"
        return "relationship \(relationship.field) \(target) (\(kind)\(rule))"
    }

    /// A kind as a person reads it: `int`, `[string]`, `{weight: int, color: string?}`.
    private static func describe(_ kind: RecordValue, path: String, optional: Set<String>) -> String {
        switch kind {
        case .string(let name): return name
        case .array(let elements):
            guard !elements.isEmpty else { return "[any]" }
            // Several kinds: the elements take them in turn (a dictionary keyed by UUIDs: `[uuid, int]`).
            return "[" + elements.map { describe($0, path: path + ".[]", optional: optional) }.joined(separator: ", ")
                + "]"
        case .map(let fields):
            return "{"
                + fields.map { field in
                    let inner = path + "." + field.name
                    return "\(field.name): \(describe(field.value, path: inner, optional: optional))"
                        + (optional.contains(inner) ? "?" : "")
                }.joined(separator: ", ") + "}"
        default: return "any"
        }
    }
}
