import Foundation
import RillStorage

extension Store {
    /// The author of the commits of migrations, as history and `rill log` show them.
    package static let migrationAuthor = "rill.migration"

    /// The catalog key that records that `entity`'s records were migrated from schema `version`
    /// (`migration:<Entity>:0000000001` → the log's last commit before the migration's,
    /// big-endian).
    private static func migrationKey(for entity: String, from version: UInt64) -> [UInt8] {
        let number = String(version)
        return Array("migration:\(entity):\(String(repeating: "0", count: max(0, 10 - number.count)) + number)".utf8)
    }

    /// Whether the records of `entity` were migrated from schema `version` on this store.
    package func hasMigrated(_ entity: String, from version: UInt64) throws -> Bool {
        let meta = self.meta
        return try withReadTransaction { txn in
            try txn.get(Self.migrationKey(for: entity, from: version), in: meta) != nil
        }
    }

    /// Registers the entity as `registerEntity(named:identifierKind:indexes:uniqueness:schema:relationships:)` does, and
    /// migrates its records from `migration.from` to `schema`, unless that was done already.
    ///
    /// The records that need it are read in one snapshot and rewritten outside it (the model's
    /// code does not run inside a read), then written in one save with the registration of the
    /// new schema and the record of the migration (`migration:<Entity>:<version>`): one commit
    /// authored ``migrationAuthor``, so history shows it, and no reader sees the new schema with
    /// records of the old one. The save checks, in its write transaction, that the migration has
    /// not run and that no commit came since the snapshot; of two processes migrating at once
    /// one writes, and the other, finding the record, registers only. A commit made meanwhile by
    /// another writer makes it read again.
    ///
    /// - Throws: the migration's errors (a record it cannot read as the earlier version, a
    ///   changed id), before anything is written; the errors of `registerEntity`.
    package func registerEntity(
        named name: String, identifierKind: IdentifierKind, indexes: [[[String]]],
        uniqueness: [String: UniqueConflictPolicy] = [:], schema: EntitySchema,
        relationships: [RelationshipSchema] = [],
        migrating migration: StoreMigration
    ) throws -> EntityStorage {
        let version = migration.from.version
        for _ in 0..<8 {
            guard try !hasMigrated(name, from: version), let entity = try entity(named: name) else { break }
            let log = self.log
            let (head, pending) = try read { snapshot -> (UInt64, [(key: [UInt8], record: [UInt8])]) in
                var pending: [(key: [UInt8], record: [UInt8])] = []
                try snapshot.forEachRecord(of: entity) { key, record in
                    if migration.needsMigration(record) { pending.append((Array(key), Array(record))) }
                    return true
                }
                return (try log.head(in: snapshot), pending)
            }
            let changes = try pending.map { key, record in
                PreparedChange(
                    entity: entity, key: key,
                    operation: .upsert(try record.withUnsafeBytes { try migration.migrate(key, $0) }))
            }
            var declaration = try EntityDeclaration(name: name, identifierKind: identifierKind, indexes: indexes)
            declaration.uniqueness = uniqueness
            declaration.schema = schema
            declaration.relationships = relationships
            let (meta, key) = (self.meta, Self.migrationKey(for: name, from: version))
            declaration.whenApplied = { txn in
                if try txn.get(key, in: meta) != nil { throw MigrationInterrupted.done }
                guard try log.head(in: txn) == head else { throw MigrationInterrupted.committedMeanwhile }
                try txn.put(withUnsafeBytes(of: head.bigEndian) { Array($0) }, for: key, in: meta)
            }
            do {
                _ = try commit(changes, author: Self.migrationAuthor, declaring: [declaration])
            } catch is MigrationInterrupted {
                continue
            }
            guard let storage = try self.entity(named: name) else {
                throw RillError(.corruptStore, "entity \(name) vanished while it was migrated")
            }
            return storage
        }
        if try !hasMigrated(name, from: version), try entity(named: name) != nil {
            throw RillError(.storage, "the store kept changing while the migration of \(name) read it")
        }
        return try registerEntity(
            named: name, identifierKind: identifierKind, indexes: indexes, uniqueness: uniqueness, schema: schema,
            relationships: relationships)
    }

    /// Why a migration's save stopped before writing.
    private enum MigrationInterrupted: Error {
        /// Another process ran it.
        case done
        /// A commit came after the records were read: they are read again.
        case committedMeanwhile
    }
}
