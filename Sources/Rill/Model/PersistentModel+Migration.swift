import Foundation

extension PersistentModel {
    /// The entity of this model type in `store`: registered with the model's schema when the
    /// container saves (nil otherwise when the store has no such entity yet), after the model's
    /// migration from the store's current schema when a field changed kind (see
    /// ``ModelEvolution/Step/migrated(from:_:)``).
    ///
    /// - Throws: `RillError(.migrationRequired)` with a ``SchemaKindChange`` when the model reads
    ///   a field as another kind than the store's current schema and declares no migration from
    ///   it, when the store's schema is newer than the model's with such a change (an older
    ///   version of the app opening a migrated store), or when the migration would run but the
    ///   store is opened read-only.
    static func openEntity(
        in store: Store, identifierKind kind: IdentifierKind, allowsSave: Bool
    ) throws -> EntityStorage? {
        let schema = probedSchema
        var migration: StoreMigration?
        if let schema, let stored = try store.schema(of: entityName), !stored.describesSame(as: schema),
            // The identifier's kind is the entity's, which registration holds the model to.
            let change = schema.kindChanges(from: stored).first(where: { $0.field != "id" })
        {
            let versions = try store.schemaVersions(of: entityName)
            let known = versions.first { $0.describesSame(as: schema) }
            let kindChange = SchemaKindChange(
                entity: entityName, field: change.field, storedVersion: stored.version, storedKind: change.stored,
                modelVersion: known?.version ?? ((versions.map(\.version).max() ?? stored.version) + 1),
                modelKind: change.model)
            if let known, known.version < stored.version {
                throw RillError(
                    .migrationRequired,
                    "\(kindChange): the store was migrated to version \(stored.version), which \(Self.self) "
                        + "(version \(known.version)) cannot read", underlyingError: kindChange)
            }
            guard let declared = evolution.migrations.first(where: { $0.startsFrom(stored) }) else {
                throw RillError(
                    .migrationRequired,
                    "\(kindChange): declare a migration from a type that reads version \(stored.version) "
                        + "(.migrated(from:) in \(Self.self)'s `static let evolution`)", underlyingError: kindChange)
            }
            guard allowsSave else {
                throw RillError(
                    .migrationRequired,
                    "\(kindChange): the migration from \(declared.earlierName) has not run, and the store is opened "
                        + "read-only; open it once with allowsSave to run it", underlyingError: kindChange)
            }
            migration = declared.storeMigration(from: stored, to: schema)
        }
        guard allowsSave else { return try store.entity(named: entityName) }
        if let schema, let migration {
            return try store.registerEntity(
                named: entityName, identifierKind: kind, indexes: indexFieldPaths,
                uniqueness: uniqueIndexes, schema: schema, relationships: relationshipSchemas, migrating: migration)
        }
        return try store.registerEntity(
            named: entityName, identifierKind: kind, indexes: indexFieldPaths, uniqueness: uniqueIndexes,
            schema: schema, relationships: relationshipSchemas)
    }
}
