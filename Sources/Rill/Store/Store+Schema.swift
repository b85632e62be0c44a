import Foundation
import RillLocks
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

    /// How records of earlier versions of `entity` read as its current schema's (the defaults
    /// of added fields, the earlier names of renamed ones), for readers without the model type;
    /// nil when its schema describes no evolution, or it has none.
    ///
    /// One lookup in the catalog as `snapshot` sees it: the schema is parsed again only when
    /// another version became current (registered by this process or another).
    package func evolution(of entity: String, in snapshot: StoreSnapshot) throws -> RecordEvolution? {
        try evolution(of: entity, in: snapshot.transaction)
    }

    /// `evolution(of:in:)` in a read of its own.
    package func evolution(of entity: String) throws -> RecordEvolution? {
        try withReadTransaction { try evolution(of: entity, in: $0) }
    }

    func evolution(of entity: String, in txn: some Transaction) throws -> RecordEvolution? {
        // A read of the store as the one that looked last saw it finds what that one found. (Not
        // a write transaction: it changes the store under one number.)
        let seen: UInt64? = txn is ReadTransaction ? txn.transactionID : nil
        let known = evolutions.withLock { $0[entity] }
        if let known, let seen, known.seen == seen { return known.evolution }
        guard let raw = try txn.get(Self.schemaCatalogKey(for: entity), in: meta) else {
            evolutions.withLock { $0[entity] = ([], nil, seen) }
            return nil
        }
        if let known, !known.schema.isEmpty, raw.elementsEqual(known.schema) {
            evolutions.withLock { $0[entity]?.seen = seen }
            return known.evolution
        }
        let evolution = try Self.schema(of: entity, in: txn, meta: meta).flatMap { RecordEvolution(schema: $0) }
        let bytes = Array(raw)
        evolutions.withLock { $0[entity] = (bytes, evolution, seen) }
        return evolution
    }

    /// The record of `entity` with identifier key `key` as the entity's current schema reads it
    /// (see `RecordEvolution`), or nil when there is none: what `rill get` prints.
    package func currentRecordValue(of entity: EntityStorage, key: [UInt8]) throws -> RecordValue? {
        try read { snapshot in
            guard let bytes = try snapshot.record(of: entity, key: key) else { return nil }
            let record = try key.withUnsafeBytes { try Self.recordValue(bytes, key: $0, entity: entity.name) }
            return try evolution(of: entity.name, in: snapshot)?.evolve(record) ?? record
        }
    }

    /// The prefix of the keys of every schema registered for `entity`, by version
    /// (`schemas:<Entity>:0000000002`).
    private static func versionsPrefix(for entity: String) -> String { "schemas:\(entity):" }

    /// Every schema registered for `entity`, oldest first.
    package func schemaVersions(of entity: String) throws -> [EntitySchema] {
        let meta = self.meta
        return try withReadTransaction { txn in
            try Self.keys(withPrefix: Self.versionsPrefix(for: entity), in: meta, txn: txn).sorted().compactMap {
                name in
                guard let raw = try txn.get(Array((Self.versionsPrefix(for: entity) + name).utf8), in: meta),
                    raw.count > 1, let value = try? RecordValue(record: UnsafeRawBufferPointer(rebasing: raw[1...]))
                else { return nil }
                return EntitySchema(json: value)
            }
        }
    }

    /// Keeps `schema` for `entity` in `txn`, with its kinds as the entity's declared fields, and
    /// returns the schema kept. A schema registered before (by any version of the model: an
    /// older writer opening the store again) changes nothing; a new one is kept one version
    /// after the highest and becomes the current one, which `rill schema` shows and `rill check`
    /// holds the records to.
    static func keepSchema(
        _ schema: EntitySchema, of entity: String, in txn: WriteTransaction, meta: Database
    ) throws -> EntitySchema {
        let stored = try Self.schema(of: entity, in: txn, meta: meta)
        if let stored, stored.describesSame(as: schema) { return stored }
        let prefix = versionsPrefix(for: entity)
        for name in try keys(withPrefix: prefix, in: meta, txn: txn) {
            guard let raw = try txn.get(Array((prefix + name).utf8), in: meta), raw.count > 1,
                let value = try? RecordValue(record: UnsafeRawBufferPointer(rebasing: raw[1...])),
                let known = EntitySchema(json: value)
            else { continue }
            if known.describesSame(as: schema) { return known }
        }
        var kept = schema
        kept.version = (stored?.version ?? 0) + 1
        let bytes = [schemaCatalogVersion] + kept.jsonValue.recordBytes()
        try txn.put(bytes, for: schemaCatalogKey(for: entity), in: meta)
        let number = String(kept.version)
        try txn.put(
            bytes, for: Array((prefix + String(repeating: "0", count: max(0, 10 - number.count)) + number).utf8),
            in: meta)
        if let shape = RecordShape(json: schema.kinds) {
            try keepDeclaredShape(shape, of: entity, in: txn, meta: meta)
        }
        return kept
    }
}
