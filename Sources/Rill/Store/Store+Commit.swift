import Foundation
import RillLocks
import RillStorage

/// A change ready to be written: the model already encoded, its identifier already a key.
package struct PreparedChange: Sendable {
    package enum Operation: Sendable {
        /// Insert the record, or replace the stored one with the same identifier.
        case upsert([UInt8])
        /// Insert the record only when no record has its identifier: decided inside the save's
        /// transaction, so of two processes inserting one identifier at once, one inserts and
        /// the other's change does nothing.
        case insertIfAbsent([UInt8])
        /// Set these top-level fields of the stored record (a null value removes the field),
        /// keeping the others; the record must exist.
        case update([RecordField])
        case delete
    }

    /// The entity's name.
    package var entityName: String
    /// The entity's storage as the change's maker knew it; nil for an entity the save itself declares (see
    /// `EntityDeclaration`), whose storage the save's transaction creates.
    package var entity: EntityStorage?
    package var key: [UInt8]
    package var operation: Operation
    /// Where the change came from, for errors (`line 7 of books.ndjson`); nil when there is nothing to name.
    package var source: String?

    package init(entity: EntityStorage, key: [UInt8], operation: Operation, source: String? = nil) {
        self.entityName = entity.name
        self.entity = entity
        self.key = key
        self.operation = operation
        self.source = source
    }

    /// A change of an entity that the save declares, and that the store may not hold yet.
    package init(entityNamed name: String, key: [UInt8], operation: Operation, source: String? = nil) {
        self.entityName = name
        self.entity = nil
        self.key = key
        self.operation = operation
        self.source = source
    }
}

extension Store {
    // MARK: - Writing

    /// Appends one commit holding `changes` and applies them to the projections, atomically.
    ///
    /// A change that would leave its record as it is (an identical upsert, a delete of a missing
    /// record) is left out; when nothing is left, no commit is written and nil is returned.
    ///
    /// `declaring` lists entities the save declares (an import's descriptions): they are applied first, in the
    /// same transaction (see `EntityDeclaration`), so that when the save fails — a change that does not fit, a
    /// value an index cannot hold, a full disk — no entity, index or declared field is left behind either. A
    /// change with a `source` fails with an error naming it.
    ///
    /// - Returns: the log entry written, or nil when nothing changed.
    package func commit(
        _ changes: [PreparedChange], author: String?, declaring declarations: [EntityDeclaration] = []
    ) throws -> LogEntry? {
        guard !changes.isEmpty || !declarations.isEmpty else { return nil }
        return try commit(PreparedBatch(changes), author: author, declaring: declarations)
    }

    /// Like `commit(_:author:declaring:)`, taking the changes chunk by chunk from `batch` as they become
    /// ready; `meanwhile` runs on the calling thread during the transaction (it prepares the batch).
    ///
    /// A save without `meanwhile` or declarations shares its transaction with the saves other
    /// threads make at the same time (group commit, see `Environment.writeGrouped`): each keeps its
    /// own log entry and fails alone, and one flush makes them all durable. A save that prepares its
    /// batch meanwhile, or declares entities, has a transaction of its own.
    package func commit(
        _ batch: PreparedBatch, author: String?, declaring declarations: [EntityDeclaration] = [],
        meanwhile: (() -> Void)? = nil
    ) throws -> LogEntry? {
        if replica == nil, let followedLog { throw refusalOfUnreplicatedSave(following: followedLog) }
        // A store with its own log alone never diverges: its saves take no lock for this.
        if replica != nil, let divergence = replicaDivergence.withLock({ $0 }) { throw divergence }
        var (attempt, conflicts, catalogChanges) = (0, 0, 0)
        while true {
            defer { attempt += 1 }
            do {
                // The batch is prepared during the first attempt; later attempts find it ready.
                let entry = try attemptCommit(
                    batch, author: author, declaring: declarations, meanwhile: attempt == 0 ? meanwhile : nil)
                forgetDeclared(declarations)
                // Followers of this process's log (live queries among them) learn of it at once.
                if let entry { log.publishCommitted(through: entry.sequence) }
                return entry
            } catch is ReplicaMovedOn {
                // Another node committed first: apply what it did, then validate the save again.
                conflicts += 1
                guard conflicts < Self.replicaConflictLimit else {
                    throw RillError(
                        .replicationUnavailable,
                        "other nodes kept committing first: \(conflicts) attempts of this save lost the race")
                }
                try catchUpWithReplica()
            } catch let changed as CatalogChanged {
                // Another process added an index: reload the entities and write again.
                catalogChanges += 1
                guard catalogChanges < 8 else {
                    throw RillError(.storage, "the store's catalog kept changing during a save")
                }
                for name in changed.entities { catalog.withLock { $0.entities[name] = nil } }
                for name in changed.entities { _ = try entity(named: name) }
            } catch let failure as EnvironmentFailure {
                // The store reopened its files (or failed to): the head it reads now says which
                // commit the save would have been.
                throw Self.failedSave(failure, directory: directory, commit: (try? head()).map { $0 + 1 })
            } catch {
                throw Self.translate(error, directory: directory)
            }
        }
    }

    /// Thrown inside a save's transaction, before anything is written, when an entity's indexes
    /// changed since this process read them.
    private struct CatalogChanged: Error {
        var entities: [String]
    }

    private func attemptCommit(
        _ batch: PreparedBatch, author: String?, declaring declarations: [EntityDeclaration], meanwhile: (() -> Void)?
    ) throws -> LogEntry? {
        let (log, meta, directory, progress) = (self.log, self.meta, self.directory, self.progress)
        let flushesEachCommit = environment.options.syncMode == .full
        let known = catalog.withLock { $0.entities }
        let replica = self.replica
        // The entry the replica took, should LMDB run the body again (a map growth): the same one is written.
        let published = replica.map { _ in Lock<LogEntry?>(nil) }
        let body = { (txn: WriteTransaction) throws -> LogEntry? in
            // Read before the declarations bump it: what this process's cached entities must match.
            let version = try Self.catalogVersion(in: txn, meta: meta)
            // Declared entities come from this transaction, with the indexes it built.
            var current: [String: EntityStorage] = [:]
            for declaration in declarations {
                current[declaration.name] = try Self.apply(
                    declaration, in: txn, meta: meta, directory: directory, progress: progress)
            }
            var last: EntityStorage?
            var applied: [LogEntry.Change] = []
            var rules: RelationshipRules?
            // Made anew for each run of the body (LMDB runs it again after growing the map).
            let deferred = DeferredIndexPuts()
            for index in 0..<batch.chunkCount {
                let chunk = try batch.chunk(index)
                // Room for the chunk, growing geometrically: reserving exactly what each chunk needs
                // copied every change applied so far once a chunk, quadratic in a large save.
                let needed = applied.count + chunk.count
                if applied.capacity < needed { applied.reserveCapacity(max(needed, 2 * applied.capacity)) }
                for change in chunk {
                    let name = change.entityName
                    let entity: EntityStorage
                    // Consecutive changes are usually of one entity: skip the table then.
                    if let previous = last, previous.name == name {
                        entity = previous
                    } else if let resolved = current[name] {
                        entity = resolved
                    } else {
                        guard let found = known[name] ?? change.entity else {
                            throw Self.error(
                                RillError(.unknownEntity, "the store has no entity \(name)"), at: change.source,
                                directory: directory)
                        }
                        guard found.catalogVersion == version else { throw CatalogChanged(entities: [name]) }
                        entity = found
                        current[name] = entity
                    }
                    last = entity
                    do {
                        if let effective = try Self.apply(change, to: entity, in: txn, deferring: deferred) {
                            applied.append(effective)
                            if RelationshipRules.concern(entity) {
                                // The rules read and change records and indexes of their own accord.
                                try deferred.flush(in: txn)
                                if rules == nil { rules = RelationshipRules(txn: txn, meta: meta) }
                                try rules!.follow(effective, of: entity, into: &applied)
                            }
                        }
                    } catch {
                        throw Self.error(error, at: change.source, directory: directory)
                    }
                }
            }
            try deferred.flush(in: txn)
            try rules?.finish()
            guard !applied.isEmpty else { return nil }
            let next = try log.next(in: txn)
            var entry = LogEntry(
                sequence: next.sequence, timestamp: next.timestamp, author: author, changes: applied)
            if let replica {
                if let earlier = published?.withLock({ $0 }), earlier.sequence == entry.sequence {
                    entry = earlier
                } else {
                    try Self.publish(entry, to: replica)
                    published?.withLock { $0 = entry }
                }
            }
            try log.append(entry, in: txn)
            try log.noteFlush(of: entry.sequence, flushed: flushesEachCommit, in: txn)
            return entry
        }
        if let meanwhile { return try environment.write(body, meanwhile: meanwhile) }
        // A replicated save's commit must follow the head it was validated against: a transaction of its own.
        guard declarations.isEmpty, replica == nil else { return try environment.write(body) }
        return try environment.writeGrouped(body)
    }

    /// Applies one change to its projection and indexes; returns what the log records of it, or
    /// nil for a no-op.
    static func apply(
        _ change: PreparedChange, to entity: EntityStorage, in txn: WriteTransaction,
        deferring deferred: DeferredIndexPuts? = nil
    ) throws -> LogEntry.Change? {
        let database = entity.database
        let hasIndexes = !entity.indexes.isEmpty
        var operation = change.operation
        if case .insertIfAbsent(let record) = operation {
            guard try txn.get(change.key, in: database) == nil else { return nil }
            operation = .upsert(record)
        }
        if case .update(let fields) = operation {
            guard let existing = try txn.get(change.key, in: database) else {
                let id = change.key.withUnsafeBytes { AnyIdentifier(storageKey: $0) }.map { "\($0)" } ?? "?"
                throw RillError(.invalidRecord, "there is no \(entity.name) \(id) to update")
            }
            let current = try change.key.withUnsafeBytes {
                try Store.recordValue(existing, key: $0, entity: entity.name)
            }
            operation = .upsert(current.settingFields(fields).recordBytes())
        }
        switch operation {
        case .update, .insertIfAbsent:
            preconditionFailure("an update or a conditional insert was turned into an upsert above")
        case .upsert(let given):
            // Only an entity with a unique index pays for the check (see `resolvingUniqueness`); an insert of
            // values another record has may become an update of that record, under its identifier.
            let (id, record) =
                hasIndexes && entity.hasUniqueIndexes
                ? try resolvingUniqueness(of: given, key: change.key, entity: entity, in: txn) : (change.key, given)
            return try id.withUnsafeBytes { key -> LogEntry.Change? in
                try record.withUnsafeBytes { value -> LogEntry.Change? in
                    // One descent for the common case: a new record goes in, an existing one comes back.
                    guard let existing = try txn.insert(value, for: key, in: database) else {
                        if hasIndexes {
                            try updateIndexes(
                                of: entity, id: id, old: nil, new: value, changedFields: nil, in: txn,
                                deferring: deferred)
                        }
                        return LogEntry.Change(
                            kind: .insert, entity: entity.name, key: id, changedFields: [], record: record,
                            before: nil)
                    }
                    if existing.elementsEqual(value) { return nil }
                    let fields = try changedFields(from: existing, to: value, entity: entity.name)
                    // `existing` points into the map: use it before the next write moves pages.
                    let before = Array(existing)
                    if hasIndexes {
                        try updateIndexes(
                            of: entity, id: id, old: existing, new: value, changedFields: fields, in: txn,
                            deferring: deferred)
                    }
                    try txn.put(value, for: key, in: database)
                    return LogEntry.Change(
                        kind: .update, entity: entity.name, key: id, changedFields: fields, record: record,
                        before: before)
                }
            }
        case .delete:
            // The log keeps the record as it was; read before the delete frees its pages.
            guard let old = try txn.get(change.key, in: database) else { return nil }
            let before = Array(old)
            if hasIndexes {
                try updateIndexes(
                    of: entity, id: change.key, old: old, new: nil, changedFields: nil, in: txn, deferring: deferred)
            }
            guard try txn.delete(change.key, in: database) else { return nil }
            return LogEntry.Change(
                kind: .delete, entity: entity.name, key: change.key, changedFields: [], record: nil, before: before)
        }
    }

    /// The top-level fields that differ between two versions of a record, in the new version's
    /// order, then those the new version no longer has.
    private static func changedFields(
        from old: UnsafeRawBufferPointer,
        to new: UnsafeRawBufferPointer,
        entity: String
    ) throws -> [String] {
        let before: [(name: String, value: Range<Int>)]
        let after: [(name: String, value: Range<Int>)]
        do {
            before = try RecordCoder.topLevelFields(old)
            after = try RecordCoder.topLevelFields(new)
        } catch {
            throw RillError(.corruptStore, "a stored \(entity) record is unreadable", underlyingError: error)
        }
        var changed: [String] = []
        for field in after {
            if let previous = before.first(where: { $0.name == field.name }),
                old[previous.value].elementsEqual(new[field.value])
            {
                continue
            }
            changed.append(field.name)
        }
        for field in before where !after.contains(where: { $0.name == field.name }) {
            changed.append(field.name)
        }
        return changed
    }

    // MARK: - Reading the log

    /// The sequence number of the last commit `snapshot` sees, 0 for an empty log.
    package func head(in snapshot: StoreSnapshot) throws -> UInt64 {
        try log.head(in: snapshot)
    }

    /// The sequence number of the last commit, 0 for an empty log.
    package func head() throws -> UInt64 {
        try read { try log.head(in: $0) }
    }

    /// Up to `limit` commits with sequence numbers greater than `sequence`, in order.
    package func entries(after sequence: UInt64, limit: Int = .max) throws -> [LogEntry] {
        try read { try log.entries(after: sequence, limit: limit, in: $0) }
    }

    /// The number of commits in the log.
    package func entryCount() throws -> Int {
        try read { try log.entryCount(in: $0) }
    }

    // MARK: - Reading records

    /// A copy of the current record of `entity` with identifier key `key`, or nil.
    package func record(of entity: EntityStorage, key: [UInt8]) throws -> [UInt8]? {
        try read { try $0.record(of: entity, key: key).map { Array($0) } }
    }

    /// The number of records of `entity`.
    package func recordCount(of entity: EntityStorage) throws -> Int {
        try read { try $0.recordCount(of: entity) }
    }

    /// Calls `body` with each record of `entity` in identifier order, inside one read transaction.
    /// The buffers are valid only during the call; `body` returns false to stop.
    package func forEachRecord(
        of entity: EntityStorage,
        _ body: (_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        _ = try read { try $0.forEachRecord(of: entity, body) }
    }
}
