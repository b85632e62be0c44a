import Foundation
import Synchronization

extension ModelContext {
    /// The transactions of the store's history that `descriptor` selects: each commit with its
    /// sequence, timestamp, author and changes, the changes with their values.
    ///
    /// History is what was saved: changes staged in a context and not yet saved are not in it.
    ///
    /// ```swift
    /// // Everything since the last sync, oldest first.
    /// let transactions = try context.fetchHistory(HistoryDescriptor(after: lastSynced))
    /// for transaction in transactions {
    ///     for change in transaction.changes(of: Book.self) { … }
    ///     lastSynced = transaction.token
    /// }
    /// ```
    ///
    /// - Throws: ``RillError`` with `.misuse` when `descriptor.after` is past the store's last
    ///   commit (a token of another store, or of one restored from an older backup), and with
    ///   `.unknownEntity` when `descriptor.entityNames` names an entity that is neither one of the
    ///   container's model types nor one the store has (a misspelled name would otherwise select
    ///   nothing, silently).
    public func fetchHistory(_ descriptor: HistoryDescriptor) throws -> [HistoryTransaction] {
        let store = self.store
        try requireHistoryEntities(of: descriptor)
        return try store.read { try store.history(descriptor, in: $0) }.map(HistoryTransaction.init)
    }

    /// Throws `.unknownEntity` for the first entity name of `descriptor` that is neither one of
    /// the container's model types nor an entity of the store, naming the closest of those.
    private func requireHistoryEntities(of descriptor: HistoryDescriptor) throws {
        for name in (descriptor.entityNames ?? []).sorted() where !container.entitiesByName.keys.contains(name) {
            guard try store.entity(named: name) != nil else {
                let known = Set(container.entitiesByName.keys).union(try store.entityNames()).sorted()
                let suggestion = NameSuggestion.closest(to: name, among: known).map { " (did you mean \($0)?)" } ?? ""
                throw RillError(
                    .unknownEntity,
                    "the history has no entity \(name)\(suggestion): the container's model types and the store "
                        + "have \(known.isEmpty ? "none" : known.joined(separator: ", "))")
            }
        }
    }

    /// The token of the store's last commit: the position to persist for asking later what
    /// came after now.
    public func currentHistoryToken() throws -> HistoryToken {
        HistoryToken(sequence: try store.head())
    }

    /// Deletes the store's history before the transaction of `token`: the commits before it are
    /// folded into a snapshot of the state then, the log's *horizon*, and dropped, as
    /// `rill compact --before` does. SwiftData's callers delete the history they have processed
    /// so; here the log is what keeps it, and a log sheds its oldest commits only.
    ///
    /// ```swift
    /// for transaction in try context.fetchHistory(HistoryDescriptor(after: lastSynced)) { … }
    /// lastSynced = try context.currentHistoryToken()
    /// try context.deleteHistory(before: lastSynced)
    /// ```
    ///
    /// The models are as they were, and every answer about the horizon or later stays the same:
    /// history after it, fetches as of it or later, live queries resuming from it. An earlier
    /// one fails with `.historyCompacted`, naming the horizon. The log's last commit is always
    /// kept. The pages freed are reused by later saves (the file keeps its size; `rill compact`
    /// shrinks it when no process has the store open). The live queries of this process have
    /// read the commits to drop before they are dropped.
    ///
    /// - Returns: how many transactions were deleted (none when the history before the token
    ///   is gone already).
    /// - Throws: ``RillError`` with `.misuse` when `token` is past the store's last commit,
    ///   `.historyRetained` when a registered subscription (``ModelContainer/registerSubscription(named:at:)``)
    ///   has not processed the commits to drop, naming it, and `.readOnly` when the container
    ///   may not save; nothing is deleted then.
    @discardableResult
    public func deleteHistory(before token: HistoryToken) throws -> Int {
        try deleteHistory(keepingFrom: { _ in token.sequence })
    }

    /// Deletes the store's history of the transactions made before `date`, as
    /// ``deleteHistory(before:)-(HistoryToken)`` does; the last commit is kept whatever its
    /// date, so that `deleteHistory(before: .now)` keeps only that one.
    @discardableResult
    public func deleteHistory(before date: Date) throws -> Int {
        let store = self.store
        return try deleteHistory(keepingFrom: { snapshot in
            min(try store.log.firstSequence(madeAtOrAfter: date, in: snapshot), try store.log.head(in: snapshot))
        })
    }

    /// Folds the commits before the one `first` names into the log's snapshot, once this
    /// process's follower has applied them; the number of commits dropped.
    private func deleteHistory(keepingFrom first: (StoreSnapshot) throws -> UInt64) throws -> Int {
        guard container.allowsSave else {
            throw RillError(.readOnly, "the container's configuration does not allow deleting history")
        }
        let store = self.store
        let kept = try store.read(first)
        // A follower that had not read a commit when it was dropped would find it gone: the live
        // queries of this process first catch up with it (those of other processes do not wait).
        if kept > 1, let follower = LogFollowers.running(for: store.fileID),
            follower.appliedThrough.load(ordering: .relaxed) < kept - 1
        {
            try follower.perform { _, _ in nil }
        }
        return try store.compact(before: kept).droppedCommits
    }

    /// The transactions after `token`, as they commit, from this process or any other: an
    /// asynchronous sequence that first delivers the history already recorded after the token,
    /// then each new transaction, until the task iterating it is cancelled (or `through` in the
    /// descriptor is reached).
    ///
    /// ```swift
    /// for try await transaction in context.historyUpdates(after: token) {
    ///     audit(transaction)
    /// }
    /// ```
    ///
    /// The descriptor filters as in ``fetchHistory(_:)`` (an unknown entity name makes the first
    /// `next()` throw `.unknownEntity`); its `after` is replaced by `token` and
    /// its `fetchLimit` bounds each read of the log (one transaction at least), not the sequence. While it waits for a
    /// commit, an iteration holds a thread of Dispatch's pool, woken by the commit (or after a
    /// second at most, to check for cancellation and other processes' commits).
    public func historyUpdates(
        after token: HistoryToken? = nil, matching descriptor: HistoryDescriptor = HistoryDescriptor()
    ) -> HistoryObserver {
        var observer = HistoryObserver(store: store, after: token ?? HistoryToken(sequence: 0), descriptor: descriptor)
        do {
            try requireHistoryEntities(of: descriptor)
        } catch {
            observer.problem = error as? RillError ?? RillError(.storage, "\(error)", underlyingError: error)
        }
        return observer
    }
}
