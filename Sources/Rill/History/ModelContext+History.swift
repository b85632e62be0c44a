import Foundation

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
    ///   commit (a token of another store, or of one restored from an older backup).
    public func fetchHistory(_ descriptor: HistoryDescriptor) throws -> [HistoryTransaction] {
        let store = self.store
        return try store.read { try store.history(descriptor, in: $0) }.map(HistoryTransaction.init)
    }

    /// The token of the store's last commit: the position to persist for asking later what
    /// came after now.
    public func currentHistoryToken() throws -> HistoryToken {
        HistoryToken(sequence: try store.head())
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
    /// The descriptor filters as in ``fetchHistory(_:)``; its `after` is replaced by `token` and
    /// its `fetchLimit` bounds each read of the log (one transaction at least), not the sequence. While it waits for a
    /// commit, an iteration holds a thread of Dispatch's pool, woken by the commit (or after a
    /// second at most, to check for cancellation and other processes' commits).
    public func historyUpdates(
        after token: HistoryToken? = nil, matching descriptor: HistoryDescriptor = HistoryDescriptor()
    ) -> HistoryObserver {
        HistoryObserver(store: store, after: token ?? HistoryToken(sequence: 0), descriptor: descriptor)
    }
}
