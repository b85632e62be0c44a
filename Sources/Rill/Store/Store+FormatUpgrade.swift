import Foundation
import RillStorage

extension Store {
    /// Raises a store of an older format to the current one, in one write transaction.
    ///
    /// Format 2 cuts long strings, URLs and data in index keys to a prefix, and lists the
    /// identifiers of entries whose key cannot hold them whole (see `IndexEntry`). A format-1
    /// index holds only whole values, so every key whose values are short enough is already a
    /// format-2 key; an index with a longer value (one format 2 would cut) is rebuilt from its
    /// entity's records. The other indexes are only read.
    ///
    /// Format 3 keeps, in each update and delete of the log, the record before it (log entries
    /// of format 2, see `LogEntry`). The log of an older store is replayed from the start into its
    /// projections, each older entry written again with the records before its changes, and
    /// every index is rebuilt: the work of `rill rebuild`, done once.
    ///
    /// Format 4 keys a string identifier by the UTF-8 of its NFC form: the records an older store
    /// keyed otherwise move to their NFC keys in one commit (`normalizeIdentifierKeys`); a store
    /// without such identifiers is only marked.
    static func upgradeFormat(
        environment: Environment, meta: Database, directory: String, log: Log,
        progress: (@Sendable (StoreProgress) -> Void)?
    ) throws {
        let formatKey = Array("format".utf8)
        func storedFormat(_ txn: some Transaction) throws -> UInt32? {
            guard let raw = try txn.get(formatKey, in: meta), raw.count == 4 else { return nil }
            return raw.reduce(0) { $0 << 8 | UInt32($1) }
        }
        guard let stored = try environment.read({ try storedFormat($0) }), stored < formatVersion else { return }
        do {
            try environment.write { txn in
                // Another process may have upgraded the store meanwhile.
                guard let current = try storedFormat(txn), current < formatVersion else { return }
                if current < 3 {
                    // The rebuild that rewrites the log also rebuilds every index, in format 2.
                    _ = try rebuild(
                        in: txn, meta: meta, log: log, directory: directory, progress: progress,
                        rewritingOldEntries: true)
                }
                _ = try normalizeIdentifierKeys(
                    in: txn, meta: meta, log: log, directory: directory,
                    flushed: environment.options.syncMode == .full)
                try txn.put(withUnsafeBytes(of: formatVersion.bigEndian) { Array($0) }, for: formatKey, in: meta)
            }
        } catch let error as LMDBError where [EACCES, EPERM, EROFS].contains(error.code) {
            // Without write permission the store stays as it is: its log reads, without the
            // records before older changes (history and as-of queries that need them say so),
            // and a format-1 store is readable as format 2 unless an index holds a value format
            // 2 cuts.
            guard stored == 1 else { return }
            let indexes = try formatOneIndexes(environment: environment, meta: meta)
            let stale = try environment.read { txn in try indexes.first { try holdsLongerValues($0.index, txn: txn) } }
            guard let stale else { return }
            throw RillError(
                .permissionDenied,
                "the index \(stale.entity)(\(stale.index.name)) of \(directory) was written in store format 1 and "
                    + "must be rebuilt for format 2: open the store once with permission to write",
                underlyingError: error)
        }
    }

    /// Every index of the catalog, opened outside a write transaction (opening one runs on the writer).
    private static func formatOneIndexes(
        environment: Environment, meta: Database
    ) throws -> [(entity: String, index: IndexStorage)] {
        var indexes: [(entity: String, index: IndexStorage)] = []
        let entityNames = try environment.read { txn in
            try keys(withPrefix: EntityStorage.catalogPrefix, in: meta, txn: txn)
        }
        for entity in entityNames {
            let names = try environment.read { txn in
                try keys(withPrefix: IndexStorage.catalogPrefix(entity: entity), in: meta, txn: txn)
            }
            for name in names {
                guard
                    let database = try environment.database(
                        named: IndexStorage.databaseName(entity: entity, index: name), create: false)
                else { continue }
                let index = IndexStorage(
                    name: name, fieldPaths: IndexStorage.fieldPaths(fromName: name), database: database)
                indexes.append((entity, index))
            }
        }
        return indexes
    }

    /// Whether some key of `index` holds a value longer than format 2 keeps whole.
    private static func holdsLongerValues(_ index: IndexStorage, txn: some Transaction) throws -> Bool {
        let limit = index.payloadLimit
        // The walk stops (returns false) at the first such key.
        return try !txn.forEachEntry(in: index.database) { key, _ in
            var offset = 0
            for _ in index.fieldPaths {
                do {
                    if try IndexKey.skip(key, offset: &offset).payload > limit { return false }
                } catch {
                    // A key format 1 could not have written: rebuilding it does no harm.
                    return false
                }
            }
            return true
        }
    }

    /// Adds the entry of every record in `records` to `index`.
    static func fill(
        _ index: IndexStorage, from records: Database, entity: String, txn: WriteTransaction, progress: BuildProgress
    ) throws {
        let total = try txn.count(of: records)
        progress.report(0, of: total)
        var done = 0
        // The index starts empty and nothing reads it before it is full: every key that stands
        // alone waits, to be put in key order (see `DeferredIndexPuts`).
        let deferred = DeferredIndexPuts()
        let fields = index.topLevelFields
        try txn.forEachEntry(in: records) { key, value in
            let record = try RecordValue(record: value, fields: fields)
            let entry = try index.entry(for: record, id: Array(key), entity: entity)
            if entry.key.count < IndexEntry.maxKeySize {
                deferred.hold(entry.key, for: index.database)
            } else {
                try insert(entry, into: index, in: txn)
            }
            done += 1
            if done & 1023 == 0, done < total { progress.report(done, of: total) }
            return true
        }
        try deferred.flush(in: txn)
        progress.report(done, of: total)
    }
}
