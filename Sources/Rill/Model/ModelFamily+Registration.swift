import Foundation
import RillLocks

extension ModelFamily {
    /// The field paths of the entity's indexes: the discriminator's (which shallow fetches and
    /// `is` tests read), then each kind's, once each.
    var indexFieldPaths: [[[String]]] {
        var paths = [discriminatorIndex]
        for kind in kinds {
            for index in kind.type.indexFieldPaths where !paths.contains(index) { paths.append(index) }
        }
        return paths
    }

    /// The identifier kind the kinds share (the container has checked that they do).
    var identifierKind: IdentifierKind? { kinds.first?.type.identifierKind }

    /// The entity's schema: the union of the kinds' fields with the discriminator, each kind's
    /// own fields in `family`, every index, and the kinds' evolutions together. Nil when some
    /// kind's type refuses the probe.
    var schema: EntitySchema? {
        var kindSchemas: [FamilySchema.Kind] = []
        var defaulted: [String] = []
        var renamed: [String: String] = [:]
        var defaults: [String: RecordValue] = [:]
        for kind in kinds {
            guard let probed = kind.type.probedSchema else { return nil }
            kindSchemas.append(FamilySchema.Kind(name: kind.name, fields: probed.kinds, optional: probed.optional))
            for field in probed.defaulted where !defaulted.contains(field) { defaulted.append(field) }
            renamed.merge(probed.renamed) { first, _ in first }
            defaults.merge(probed.defaults) { first, _ in first }
        }
        let family = FamilySchema(discriminator: discriminator, kinds: kindSchemas)
        let union = family.union
        let indexNames = indexFieldPaths.map(FieldPath.name(of:))
        var schema = EntitySchema(kinds: union.fields, optional: union.optional, indexes: indexNames)
        (schema.defaulted, schema.renamed, schema.defaults) = (defaulted, renamed, defaults)
        schema.family = family
        return schema
    }

    /// The fields any kind's evolution adds or renames: a deep predicate or sort that reads one
    /// is decided on the models.
    var evolvedFields: Set<String> {
        kinds.reduce(into: []) { fields, kind in fields.formUnion(kind.type.evolvedFields) }
    }
}

extension PersistentModel {
    /// The fields the model's evolution adds or renames, computed once per type: every fetch and
    /// live query reads them, and `evolution` builds its steps anew at each call.
    static var evolvedFields: Set<String> {
        let key = ObjectIdentifier(Self.self)
        if let known = evolvedFieldsByType.withLock({ $0[key] }) { return known }
        let fields = evolution.fields
        evolvedFieldsByType.withLock { $0[key] = fields }
        return fields
    }

    /// Whether the model's evolution declares migrations of kind changes.
    static var declaresMigrations: Bool { !evolution.migrations.isEmpty }
}

extension ModelFamily {
    /// What the predicate translator knows of the family whose base is `Base`.
    func translation<Base>(base: Base.Type) -> FamilyTranslation {
        FamilyTranslation(
            discriminator: discriminator, kinds: kinds.map { (ObjectIdentifier($0.type), $0.name) }, base: self.base,
            probe: FamilyProbe.of(self, base: Base.self))
    }
}

/// `PersistentModel.evolvedFields` of each model type met.
private let evolvedFieldsByType = Lock<[ObjectIdentifier: Set<String>]>([:])
