import Foundation
import RillStorage

extension Store {
    private static func schemaCatalogKey(for entity: String) -> [UInt8] { Array("schema:\(entity)".utf8) }
    private static let schemaCatalogVersion: UInt8 = 1

    /// The schema a model type registered for `entity`, or nil when none did (an entity made by
    /// `rill import`, or by a Rill that kept no schema).
    package func schema(of entity: String) throws -> EntitySchema? {
        let meta = self.meta
        return try withReadTransaction { txn in try Self.schema(of: entity, in: txn, meta: meta) }
    }

    static func schema(of entity: String, in txn: some Transaction, meta: Database) throws -> EntitySchema? {
        guard let raw = try txn.get(schemaCatalogKey(for: entity), in: meta) else { return nil }
        guard raw.count > 1, raw[0] == schemaCatalogVersion,
            let value = try? RecordValue(record: UnsafeRawBufferPointer(rebasing: raw[1...])),
            let schema = EntitySchema(json: value)
        else {
            throw RillError(.corruptStore, "the schema of entity \(entity) in the catalog is unreadable")
        }
        return schema
    }

    /// Keeps `schema` for `entity` in `txn` when it differs from the one kept, one version
    /// later, with its kinds as the entity's declared fields; returns the schema kept.
    static func keepSchema(
        _ schema: EntitySchema, of entity: String, in txn: WriteTransaction, meta: Database
    ) throws -> EntitySchema {
        let stored = try Self.schema(of: entity, in: txn, meta: meta)
        if let stored, stored.describesSame(as: schema) { return stored }
        var kept = schema
        kept.version = (stored?.version ?? 0) + 1
        try txn.put(
            [schemaCatalogVersion] + kept.jsonValue.recordBytes(), for: schemaCatalogKey(for: entity), in: meta)
        if let shape = RecordShape(json: schema.kinds) {
            try keepDeclaredShape(shape, of: entity, in: txn, meta: meta)
        }
        return kept
    }
}
