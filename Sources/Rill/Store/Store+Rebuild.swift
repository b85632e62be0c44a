import Foundation
import RillStorage

/// What a rebuild did: the commits it replayed and what it wrote from them.
package struct StoreRebuildReport: Sendable, Hashable {
    /// The commits replayed, the whole log.
    package var commits = 0
    /// The entities of the catalog, each rebuilt.
    package var entities = 0
    /// The records the projections hold after the replay.
    package var records = 0
    /// The keys the indexes hold after the rebuild.
    package var indexEntries = 0
}

extension Store {
    /// Rebuilds every entity's records and every index from the log, in one write transaction.
    ///
    /// Each projection is cleared and the log replayed into it in order (an insert or an update
    /// puts the record, a delete removes it); then each index is cleared and filled from the
    /// replayed records by the code that builds a new index. The catalog (entities, indexes,
    /// declared fields) and the log stay as they are. Readers see the state before the rebuild
    /// until it commits, and the state after it from then on; other writers wait for it behind
    /// the writer lock. Everything is read from the transaction, so that it can run again after
    /// the map grew.
    ///
    /// - Parameter progress: told of the replay (commits) and of each index's build (records).
    /// - Throws: `.corruptStore` when an entry of the log does not read, the log has a gap or a
    ///   key out of order, or a commit names an entity the catalog lacks; nothing is written then.
    package func rebuild(progress: (@Sendable (StoreProgress) -> Void)? = nil) throws -> StoreRebuildReport {
        let (meta, log, directory) = (self.meta, self.log, self.directory)
        return try withWriteTransaction { txn in
            try Self.rebuild(in: txn, meta: meta, log: log, directory: directory, progress: progress)
        }
    }

    /// Rebuilds every projection and index in `txn` (see ``rebuild(progress:)``).
    ///
    /// With `rewritingOldEntries`, each entry of format 1 met on the way is written again in the
    /// current format, its updates and deletes given the record before them — read from the
    /// projection the replay has brought to just before that commit. This is how a store's log is
    /// raised to format 3 (`upgradeFormat`).
    static func rebuild(
        in txn: WriteTransaction, meta: Database, log: Log, directory: String,
        progress: (@Sendable (StoreProgress) -> Void)?, rewritingOldEntries: Bool = false
    ) throws -> StoreRebuildReport {
        var report = StoreRebuildReport()
        var entities: [String: EntityStorage] = [:]
        for name in try Self.keys(withPrefix: EntityStorage.catalogPrefix, in: meta, txn: txn) {
            entities[name] = try Self.storage(of: name, in: txn, meta: meta, directory: directory)
        }
        report.entities = entities.count
        for entity in entities.values { try txn.removeAll(from: entity.database) }
        let replay = BuildProgress(phase: .replayingLog, handler: progress)
        let total = try txn.count(of: log.database)
        replay.report(0, of: total)
        var previous: UInt64 = 0
        // Read in batches, each copied out of the map before it is applied: a rewritten entry is
        // put into the log while no cursor walks it.
        while true {
            let batch = try log.entries(after: previous, limit: 512, in: txn)
            guard !batch.isEmpty else { break }
            for var entry in batch {
                guard previous < UInt64.max, entry.sequence == previous + 1 else {
                    throw RillError(
                        .corruptStore,
                        "the log of \(directory)/data.mdb has commit \(entry.sequence) after commit \(previous) "
                            + "(a gap or a damaged key; run rill check)")
                }
                let rewrite = rewritingOldEntries && !entry.holdsBeforeImages
                for index in entry.changes.indices {
                    let change = entry.changes[index]
                    guard let entity = entities[change.entity] else {
                        throw RillError(
                            .corruptStore,
                            "commit \(entry.sequence) of \(directory)/data.mdb changes \(change.entity), "
                                + "an entity the store's catalog lacks (run rill check)")
                    }
                    if rewrite, change.kind != .insert {
                        guard let before = try txn.get(change.key, in: entity.database) else {
                            throw RillError(
                                .corruptStore,
                                "commit \(entry.sequence) of \(directory)/data.mdb \(change.kind.name)s a "
                                    + "\(change.entity) record that no earlier commit wrote (run rill check)")
                        }
                        entry.changes[index].before = Array(before)
                    }
                    if let record = change.record {
                        try txn.put(record, for: change.key, in: entity.database)
                    } else {
                        _ = try txn.delete(change.key, in: entity.database)
                    }
                }
                if rewrite {
                    entry.holdsBeforeImages = true
                    try txn.put(entry.encoded, for: LogEntry.key(for: entry.sequence), in: log.database)
                }
                previous = entry.sequence
                report.commits += 1
                if report.commits & 1023 == 0, report.commits < total { replay.report(report.commits, of: total) }
            }
        }
        replay.report(report.commits, of: total)
        for name in entities.keys.sorted() {
            let entity = entities[name]!
            report.records += try txn.count(of: entity.database)
            for index in entity.indexes {
                try txn.removeAll(from: index.database)
                let build = BuildProgress(phase: .buildingIndex(entity: name, index: index.name), handler: progress)
                try Self.fill(index, from: entity.database, entity: name, txn: txn, progress: build)
                report.indexEntries += try txn.count(of: index.database)
            }
        }
        return report
    }

    /// The storage of entity `name` and of its indexes, as the catalog `txn` sees describes them.
    private static func storage(
        of name: String, in txn: WriteTransaction, meta: Database, directory: String
    ) throws -> EntityStorage {
        func database(_ databaseName: String) throws -> Database {
            guard let database = try txn.database(named: databaseName, create: false) else {
                throw RillError(
                    .corruptStore,
                    "the catalog of \(directory)/data.mdb lists \(databaseName), which the file lacks (run rill check)")
            }
            return database
        }
        guard let raw = try txn.get(EntityStorage.catalogKey(for: name), in: meta) else {
            throw RillError(.corruptStore, "the catalog entry of entity \(name) vanished")
        }
        let kind = try EntityStorage.identifierKind(fromCatalogValue: raw, entity: name)
        var storage = EntityStorage(
            name: name, identifierKind: kind, database: try database(EntityStorage.databaseName(for: name)))
        for indexName in try keys(withPrefix: IndexStorage.catalogPrefix(entity: name), in: meta, txn: txn) {
            storage.indexes.append(
                IndexStorage(
                    name: indexName, fieldPaths: IndexStorage.fieldPaths(fromName: indexName),
                    database: try database(IndexStorage.databaseName(entity: name, index: indexName))))
        }
        return storage
    }
}
