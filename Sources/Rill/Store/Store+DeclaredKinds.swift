import RillStorage

extension Store {
    /// Refuses field kinds a description declares (`EntityDeclaration.fields`, an import's) that the store
    /// contradicts: a kind other than the one the entity's current schema reads (compared as a model's kind
    /// change is, `EntitySchema.kindChanges(from:)`), or than a stored record's value has.
    ///
    /// Writes given as JSON store each field as its declared kind. A description that changed the kind of a
    /// field the records hold would leave the entity with both kinds — writes of the stored kind refused, of the
    /// new one taken — and an export that does not import again. A kind is changed by a model type's migration
    /// (`Store+Migration.swift`), which rewrites the records in the commit that registers it. A description
    /// that only names new fields, or changes the kind of a field no record holds, is taken.
    ///
    /// Reads every record of the entity as `txn` holds it, before the save's own changes.
    ///
    /// - Throws: `RillError(.invalidConfiguration)` whose underlying error is a `FieldKindConflict` naming the
    ///   entity, the field, both kinds and the record or schema version that holds the other one.
    static func checkDeclaredKinds(
        _ fields: RecordShape, of entity: String, in txn: WriteTransaction, meta: Database
    ) throws {
        if let schema = try Self.schema(of: entity, in: txn, meta: meta) {
            let described = EntitySchema(kinds: fields.jsonValue, optional: [], indexes: [])
            // The identifier's kind is the entity's, which the declaration is held to already.
            if let change = described.kindChanges(from: schema).first(where: { $0.field != "id" }) {
                throw Self.conflict(
                    FieldKindConflict(
                        entity: entity, field: change.field, declaredKind: change.model, foundKind: change.stored,
                        foundIn: .schema(version: schema.version)),
                    advice: "a kind is changed by a model type's migration (.migrated(from:)), not by a description")
            }
        }
        guard let records = try txn.database(named: EntityStorage.databaseName(for: entity), create: false) else {
            return
        }
        var conflict: FieldKindConflict?
        try txn.forEachEntry(in: records) { key, value in
            // An unreadable record is `rill check`'s to report; it holds no kind to compare.
            guard let record = try? Store.recordValue(value, key: key, entity: entity),
                let mismatch = fields.kindMismatches(in: record).first
            else { return true }
            let id = AnyIdentifier(storageKey: key).map { "\($0)" } ?? "\(Array(key))"
            conflict = FieldKindConflict(
                entity: entity, field: mismatch.field, declaredKind: mismatch.declared, foundKind: mismatch.found,
                foundIn: .record(id))
            return false
        }
        if let conflict {
            throw Self.conflict(
                conflict,
                advice: "a description cannot change the kind of stored values: declare \(conflict.foundKind), "
                    + "or change or delete such records first")
        }
    }

    private static func conflict(_ conflict: FieldKindConflict, advice: String) -> RillError {
        RillError(.invalidConfiguration, "\(conflict); \(advice)", underlyingError: conflict)
    }
}
