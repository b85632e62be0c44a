import Foundation
import RillLocks
import RillStorage

/// Thrown inside a replicated save's transaction when another node's commit came first: nothing
/// is written, the store applies the commits it lacks, and the save is validated again.
struct ReplicaMovedOn: Error {}

extension Store {
    /// The `meta` key naming the replicated log a store follows (its value: the log's name).
    static let replicaKey = Array("replica".utf8)

    /// Marks the store as following `replica`, when it is opened for writing with one, and returns
    /// the name of the log the store follows, nil for none. A process that opens a marked store
    /// without its replica may read it but not save to it (``refusalOfUnreplicatedSave(following:)``);
    /// one that had it open before it was marked is not told.
    static func markReplica(
        _ replica: (any LogReplica)?, environment: Environment, meta: Database, readOnly: Bool
    ) throws -> String? {
        let marked = try environment.read { txn in
            try txn.get(replicaKey, in: meta).map { String(decoding: $0, as: UTF8.self) }
        }
        guard let replica, !readOnly, marked != replica.name else { return marked }
        try environment.write { txn in try txn.put(Array(replica.name.utf8), for: replicaKey, in: meta) }
        return replica.name
    }

    /// The error for a save made without the replicated log to a store that follows `log`: its
    /// commit would be this node's alone, and the next commit of the log would collide with it.
    func refusalOfUnreplicatedSave(following log: String) -> RillError {
        RillError(
            .readOnly,
            "\(directory) follows the replicated log \(log): save through a node connected to it, "
                + "not to the store's file")
    }

    /// How many times a save may lose the race to other nodes before it fails.
    static let replicaConflictLimit = 64

    /// How many times an append the replicated log did not answer is sent again (with the same
    /// message id, so that the log keeps it once) before the save fails.
    static let replicaAppendAttempts = 4

    /// Appends `entry` to `replica` after the commit before it, or throws ``ReplicaMovedOn``.
    ///
    /// An append left unanswered is sent again with the same id: the log answers a repeat with
    /// the number it gave the first, so a commit whose answer was lost is not taken for a conflict.
    static func publish(_ entry: LogEntry, to replica: any LogReplica) throws {
        let id = UUID().uuidString
        var attempt = 1
        var sequence: UInt64?
        while true {
            do {
                sequence = try replica.append(entry.encoded, after: entry.sequence - 1, id: id)
                break
            } catch let error as RillError where error.code == .replicationUnavailable {
                guard attempt < replicaAppendAttempts else {
                    throw RillError(
                        .replicationUnavailable,
                        "the save would have been commit \(entry.sequence); \(error.message). It may still be "
                            + "committed in \(replica.name): this node applies it from there if it is",
                        underlyingError: error)
                }
                attempt += 1
                Thread.sleep(forTimeInterval: 0.1 * Double(attempt))
            }
        }
        guard let sequence else { throw ReplicaMovedOn() }
        guard sequence == entry.sequence else {
            throw RillError(
                .replicationDiverged,
                "\(replica.name) took commit \(entry.sequence) as commit \(sequence): the store and the log disagree")
        }
    }

    /// Applies the commits of the replicated log that the store lacks, up to the log's last one now.
    ///
    /// - Throws: `.replicationDiverged` when the store holds more commits than the log, or the log
    ///   no longer holds one the store lacks; `.replicationUnavailable` when the log does not answer.
    package func catchUpWithReplica() throws {
        try keepingDivergence(catchUp)
    }

    /// Runs `body`; a divergence it finds is kept (the first one), so that later saves fail with it.
    private func keepingDivergence<R>(_ body: () throws -> R) throws -> R {
        do { return try body() } catch let error as RillError where error.code == .replicationDiverged {
            replicaDivergence.withLock { $0 = $0 ?? error }
            throw error
        }
    }

    private func catchUp() throws {
        guard let replica else { return }
        // The head first: every commit it counts was in the log before it was in the store, so a
        // `last` read after it is never behind it, whatever the follower applies meanwhile.
        var head = try self.head()
        let target = try replica.last()
        guard head <= target else {
            throw RillError(
                .replicationDiverged,
                "\(directory) holds commits up to \(head), but \(replica.name) ends at commit \(target): "
                    + "the store is not a copy of this log")
        }
        // The store's last commit must be the log's at that sequence (unless the log's limits removed it).
        if head > 0, let theirs = try replica.entry(head), let ours = try entries(after: head - 1, limit: 1).first,
            ours.encoded != theirs
        {
            throw RillError(
                .replicationDiverged,
                "commit \(head) of \(directory) is not commit \(head) of \(replica.name): "
                    + "the store is not a copy of this log")
        }
        while head < target {
            var entries: [(sequence: UInt64, entry: [UInt8])] = []
            for sequence in (head + 1)...min(target, head + 256) {
                guard let bytes = try replica.entry(sequence) else {
                    throw RillError(
                        .replicationDiverged,
                        "\(replica.name) no longer holds commit \(sequence), which \(directory) lacks: "
                            + "restore a backup taken after it, or recreate the store from a log that holds it all")
                }
                entries.append((sequence, bytes))
            }
            head = try applyReplicated(entries)
        }
    }

    /// Applies commits of the replicated log, in order, in one transaction: those the store holds
    /// already are skipped. Returns the store's head after them.
    package func applyReplicated(_ entries: [(sequence: UInt64, entry: [UInt8])]) throws -> UInt64 {
        try keepingDivergence { try apply(entries) }
    }

    private func apply(_ entries: [(sequence: UInt64, entry: [UInt8])]) throws -> UInt64 {
        let decoded = try entries.map { item in
            do {
                return try item.entry.withUnsafeBytes { try LogEntry(sequence: item.sequence, bytes: $0) }
            } catch {
                throw RillError(
                    .replicationDiverged,
                    "commit \(item.sequence) of \(replica?.name ?? "the replicated log") is unreadable: \(error)",
                    underlyingError: error)
            }
        }
        var storages: [String: EntityStorage] = [:]
        for entry in decoded {
            for change in entry.changes where storages[change.entity] == nil {
                storages[change.entity] = try replicatedEntity(change)
            }
        }
        let (log, meta, directory) = (self.log, self.meta, self.directory)
        let flushesEachCommit = environment.options.syncMode == .full
        let head = try withWriteTransaction { txn -> UInt64 in
            var head = try log.head(in: txn)
            var rules: RelationshipRules?
            // The new records' index keys, put in key order at the end (see `DeferredIndexPuts`).
            let deferred = DeferredIndexPuts()
            for entry in decoded where entry.sequence > head {
                guard entry.sequence == head + 1 else {
                    throw RillError(
                        .replicationDiverged,
                        "commit \(entry.sequence) of the replicated log follows commit \(head) of \(directory): a gap")
                }
                for change in entry.changes {
                    let entity = storages[change.entity]!
                    try Self.applyReplicated(change, to: entity, in: txn, deferring: deferred)
                    if RelationshipRules.concern(entity) {
                        try deferred.flush(in: txn)
                        if rules == nil { rules = RelationshipRules(txn: txn, meta: meta) }
                        try rules!.keepReferences(for: change, of: entity)
                    }
                }
                try log.append(entry, in: txn)
                try log.noteFlush(of: entry.sequence, flushed: flushesEachCommit, in: txn)
                head = entry.sequence
            }
            try deferred.flush(in: txn)
            return head
        }
        log.publishCommitted(through: head)
        return head
    }

    /// The entity a change of another node's commit is of: this node's, or one declared with the
    /// identifier kind of the change's key (no indexes) until this node's models declare it.
    private func replicatedEntity(_ change: LogEntry.Change) throws -> EntityStorage {
        if let entity = try entity(named: change.entity) { return entity }
        guard let first = change.key.first, let kind = IdentifierKind(rawValue: first) else {
            throw RillError(
                .replicationDiverged, "a commit of the replicated log has a \(change.entity) key of no known kind")
        }
        return try registerEntity(named: change.entity, identifierKind: kind)
    }

    /// Puts or deletes the record of one change of another node's commit, moving its index entries.
    private static func applyReplicated(
        _ change: LogEntry.Change, to entity: EntityStorage, in txn: WriteTransaction,
        deferring deferred: DeferredIndexPuts
    ) throws {
        let existing = try txn.get(change.key, in: entity.database).map { Array($0) }
        if let record = change.record {
            if !entity.indexes.isEmpty {
                try record.withUnsafeBytes { new in
                    try Self.withOptionalBytes(existing) { old in
                        try updateIndexes(
                            of: entity, id: change.key, old: old, new: new, changedFields: nil, in: txn,
                            deferring: deferred)
                    }
                }
            }
            try txn.put(record, for: change.key, in: entity.database)
        } else if let existing {
            if !entity.indexes.isEmpty {
                try existing.withUnsafeBytes { old in
                    try updateIndexes(
                        of: entity, id: change.key, old: old, new: nil, changedFields: nil, in: txn, deferring: deferred
                    )
                }
            }
            _ = try txn.delete(change.key, in: entity.database)
        }
    }

    private static func withOptionalBytes<R>(
        _ bytes: [UInt8]?, _ body: (UnsafeRawBufferPointer?) throws -> R
    ) rethrows -> R {
        guard let bytes else { return try body(nil) }
        return try bytes.withUnsafeBytes { try body($0) }
    }
}
