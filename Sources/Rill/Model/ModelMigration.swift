import Foundation

/// A migration a model declares for records of an earlier version that no evolution reads
/// automatically (a field that changed kind): each such record is decoded as the earlier
/// version's type and turned into the current model by the model's closure.
///
/// Made by ``ModelEvolution/Step/migrated(from:_:)``; run by the container, once per store (see
/// `Store.registerEntity(named:identifierKind:indexes:uniqueness:schema:relationships:migrating:)`).
struct ModelMigration<Model: PersistentModel>: Sendable {
    /// The earlier type's name, for messages.
    let earlierName: String
    /// The fields the earlier type reads (nil when the probe cannot decode it): a store whose
    /// current schema reads the same is one this migration starts from.
    let earlierSchema: EntitySchema?
    /// The current model of the record in the bytes, stored as the earlier type.
    let migrate: @Sendable (UnsafeRawBufferPointer) throws -> Model

    init<Earlier: Decodable & SendableMetatype>(
        from earlier: Earlier.Type, _ transform: @escaping @Sendable (Earlier) throws -> Model
    ) {
        earlierName = "\(Earlier.self)"
        earlierSchema = ModelSchemaProbe.schema(of: Earlier.self).map {
            EntitySchema(kinds: $0.kinds, optional: $0.optional, indexes: [])
        }
        migrate = { bytes in
            do {
                return try transform(try RecordCoder.decode(Earlier.self, from: bytes))
            } catch {
                // A record of a version before the earlier type's (a field since renamed or
                // added) is read through the model's evolution first, as the current version
                // reads it.
                guard let evolved = Model.evolution.evolve(bytes) else { throw error }
                return try transform(try evolved.withUnsafeBytes { try RecordCoder.decode(Earlier.self, from: $0) })
            }
        }
    }

    /// Whether the store's schema `stored` is one this migration reads: the earlier type reads
    /// each of its fields as the kind it records.
    func startsFrom(_ stored: EntitySchema) -> Bool {
        guard let earlierSchema else { return false }
        var reading = earlierSchema
        reading.renamed = [:]
        return reading.kindChanges(from: stored).isEmpty
    }

    /// The migration without its model type, for the store to run: which records it rewrites
    /// (those that do not read as the current model, or whose values are not of the current
    /// schema's kinds) and the bytes of each rewritten one.
    func storeMigration(from stored: EntitySchema, to schema: EntitySchema) -> StoreMigration {
        let migrate = self.migrate
        let earlierName = self.earlierName
        return StoreMigration(
            from: stored, earlierName: earlierName,
            needsMigration: { bytes in
                // Read as the current version does, through the evolution but not the migrations
                // (which would read it).
                let evolved = Model.evolution.evolve(bytes)
                let reads = evolved.map { (try? RecordCoder.decodeModel(Model.self, from: $0)) != nil }
                guard reads ?? ((try? RecordCoder.decodeModel(Model.self, from: bytes)) != nil),
                    let record = try? RecordValue(record: bytes)
                else { return true }
                return !schema.problems(of: record).isEmpty
            },
            migrate: { key, bytes in
                let model: Model
                do {
                    model = try migrate(bytes)
                } catch {
                    let id = key.withUnsafeBytes { AnyIdentifier(storageKey: $0) }.map { "\($0)" } ?? "?"
                    throw RillError(
                        .decodingFailed,
                        "the migration of \(Model.entityName) from schema version \(stored.version) failed for "
                            + "\(Model.entityName) \(id), read as \(earlierName): \(error)",
                        underlyingError: error)
                }
                guard model.id.storageKey == key else {
                    throw RillError(
                        .invalidRecord,
                        "the migration of \(Model.entityName) from schema version \(stored.version) changed the id "
                            + "of a record to \(model.id); a migration keeps each record's id")
                }
                return try RecordCoder.encode(model)
            })
    }
}
