import Foundation
import RillStorage

/// What a compaction did.
package struct StoreCompactionReport: Sendable, Hashable {
    /// The log's horizon after it: the last commit folded into the snapshot (0: never compacted).
    package var horizon: UInt64 = 0
    /// The commits dropped by this compaction.
    package var droppedCommits = 0
    /// The records of the snapshot: every record as it was after the horizon.
    package var snapshotRecords = 0
    /// The log's first and last commits after it.
    package var firstRetained: UInt64 = 0
    package var head: UInt64 = 0
}

extension Store {
    /// The prefix of the `meta` keys of durable subscriptions: `subscription:<name>` → the last
    /// commit the subscription processed (UInt64, big-endian).
    static let subscriptionPrefix = "subscription:"

    /// Folds the commits before `sequence` into the log's snapshot and drops them, in one write
    /// transaction: the horizon becomes `sequence - 1`.
    ///
    /// The snapshot is the state after the horizon: the current records, each one a later
    /// commit changed put back as the first of those commits found it (its record before).
    /// Every answer about the horizon or a later commit is unchanged — history after it, as-of
    /// queries at or after it, resuming from it, a replay — and an earlier one is refused with
    /// `.historyCompacted`. The log's last commit is always kept, so the sequence goes on.
    ///
    /// - Returns: what was done; nothing when the horizon is already at or past `sequence - 1`.
    /// - Throws: `.misuse` when `sequence` is past the log's last commit (it is always kept);
    ///   `.historyRetained` when a registered subscription has not processed the commits to
    ///   drop, naming it; nothing is written then.
    package func compact(before sequence: UInt64) throws -> StoreCompactionReport {
        let (meta, log, directory) = (self.meta, self.log, self.directory)
        return try withWriteTransaction { txn in
            let head = try log.head(in: txn)
            guard sequence <= head else {
                throw RillError(
                    .misuse,
                    "cannot compact the log before commit \(sequence): its last commit is \(head), which compaction "
                        + "keeps, so the most it folds is before \(head)")
            }
            var report = StoreCompactionReport()
            report.head = head
            let current = try log.horizon(in: txn)?.sequence ?? 0
            report.horizon = current
            report.firstRetained = current + 1
            guard sequence > current + 1 else { return report }
            let horizon = sequence - 1
            for (name, position) in try Self.subscriptions(in: txn, meta: meta) where position < horizon {
                throw RillError(
                    .historyRetained,
                    "cannot compact the log before commit \(sequence): the subscription \"\(name)\" has processed "
                        + "commits up to \(position) only, and needs those after it; compact before \(position + 1) "
                        + "at most, or remove the subscription")
            }
            // The state after the horizon: each record a later commit changed, as the first of
            // those found it.
            let later = try log.entries(after: horizon, in: txn)
            var before: [String: [[UInt8]: [UInt8]?]] = [:]
            for entry in later {
                for change in entry.changes where before[change.entity]?.index(forKey: change.key) == nil {
                    guard entry.holdsBeforeImages || change.kind == .insert else {
                        throw LogEntry.lacksBeforeImages(entry.sequence)
                    }
                    before[change.entity, default: [:]][change.key] = .some(change.before)
                }
            }
            guard let snapshotDatabase = try txn.database(named: Log.snapshotName, create: true) else {
                throw RillError(.storage, "cannot create the log snapshot database of \(directory)/data.mdb")
            }
            try txn.removeAll(from: snapshotDatabase)
            var writer = Log.SnapshotWriter(database: snapshotDatabase)
            for name in try Self.keys(withPrefix: EntityStorage.catalogPrefix, in: meta, txn: txn) {
                let entity = try Self.storage(of: name, in: txn, meta: meta, directory: directory)
                let changed = before[name] ?? [:]
                try txn.forEachEntry(in: entity.database) { key, value in
                    let id = Array(key)
                    if let earlier = changed[id] {
                        if let record = earlier { try writer.add(entity: name, key: id, record: record, in: txn) }
                    } else {
                        try writer.add(entity: name, key: id, record: UnsafeRawBufferPointer(value), in: txn)
                    }
                    return true
                }
                // Records a later commit deleted.
                for (key, earlier) in changed {
                    guard let record = earlier, try txn.get(key, in: entity.database) == nil else { continue }
                    try writer.add(entity: name, key: key, record: record, in: txn)
                }
            }
            try writer.flush(in: txn)
            report.snapshotRecords = writer.records
            // The horizon's timestamp, then the commits up to it.
            guard let last = try txn.get(LogEntry.key(for: horizon), in: log.database) else {
                throw RillError(
                    .corruptStore, "the log of \(directory)/data.mdb lacks commit \(horizon) (a gap; run rill check)")
            }
            let timestamp = try LogEntry.timestamp(of: last)
            for number in (current + 1)...horizon {
                if try txn.delete(LogEntry.key(for: number), in: log.database) { report.droppedCommits += 1 }
            }
            try log.setHorizon(Log.Horizon(sequence: horizon, timestamp: timestamp), in: txn)
            report.horizon = horizon
            report.firstRetained = horizon + 1
            return report
        }
    }

    // MARK: - Durable subscriptions

    /// The durable subscriptions registered in the store, each with the last commit it
    /// processed: compaction never drops a commit after one of them.
    package func subscriptions() throws -> [String: UInt64] {
        let meta = self.meta
        return try withReadTransaction { try Self.subscriptions(in: $0, meta: meta) }
    }

    private static func subscriptions(in txn: some Transaction, meta: Database) throws -> [String: UInt64] {
        var found: [String: UInt64] = [:]
        try txn.forEachEntry(in: meta, withPrefix: Array(subscriptionPrefix.utf8)) { name, value in
            guard value.count == 8 else { return }
            found[String(decoding: name, as: UTF8.self)] = value.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }
        return found
    }

    /// Registers the durable subscription `name`, or moves it, at `sequence`: the last commit it
    /// processed. The commits after it are kept from compaction until it moves on or is removed.
    ///
    /// - Throws: `.misuse` for an empty name or one longer than 200 bytes, or a sequence past
    ///   the log's last commit; `.historyCompacted` for a sequence before the horizon.
    package func setSubscription(_ name: String, at sequence: UInt64) throws {
        guard !name.isEmpty, name.utf8.count <= 200 else {
            throw RillError(.misuse, "a subscription's name has 1 to 200 bytes; got \(name.utf8.count)")
        }
        let (meta, log) = (self.meta, self.log)
        try withWriteTransaction { txn in
            let head = try log.head(in: txn)
            guard sequence <= head else {
                throw RillError(
                    .misuse,
                    "cannot register the subscription \"\(name)\" at commit \(sequence): the log's last commit is \(head)"
                )
            }
            if let horizon = try log.horizon(in: txn), sequence < horizon.sequence {
                throw log.compacted(
                    horizon, asking: sequence, for: "register the subscription \"\(name)\" at commit \(sequence)")
            }
            try txn.put(
                withUnsafeBytes(of: sequence.bigEndian) { Array($0) },
                for: Array((Self.subscriptionPrefix + name).utf8),
                in: meta)
        }
    }

    /// Removes the durable subscription `name`; false when there was none.
    @discardableResult
    package func removeSubscription(_ name: String) throws -> Bool {
        let meta = self.meta
        return try withWriteTransaction { txn in
            try txn.delete(Array((Self.subscriptionPrefix + name).utf8), in: meta)
        }
    }
}

/// What reclaiming a store's file space did.
package enum StoreFileRewrite: Sendable, Hashable {
    /// `data.mdb` was replaced by a compacted copy; its sizes before and after, in bytes.
    case rewritten(before: Int, after: Int)
    /// A process has the store open (this one too, while it holds a `Store` of it): the file
    /// was left as it is.
    case busy
}

extension Store {
    /// Shrinks the store's `data.mdb` to the pages in use, when no process has the store open.
    ///
    /// LMDB never shrinks its file: pages freed (by a compaction of the log, deletes) are
    /// reused by later saves, but the file keeps its size. This writes a compacted copy beside
    /// it and renames it over it, under an exclusive lock that every process opening the store
    /// holds shared (see `OpenLock`): never under a process that has the file mapped.
    ///
    /// - Throws: `.diskFull` when there is no room for the copy (the file is untouched), and
    ///   the other errors of the copy.
    package static func reclaimSpace(directory: String) throws -> StoreFileRewrite {
        do {
            switch try OpenLock.rewriteCompacted(directory: directory) {
            case .rewritten(let before, let after): return .rewritten(before: before, after: after)
            case .busy: return .busy
            }
        } catch {
            throw translate(error, directory: directory)
        }
    }
}
