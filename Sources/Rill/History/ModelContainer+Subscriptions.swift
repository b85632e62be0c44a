import Foundation

extension ModelContainer {
    /// Registers a durable subscription named `name` at `token`, the last commit it processed,
    /// or moves it there: compaction of the store's log (`rill compact`) never drops the
    /// commits after it, so the subscriber can always read its history from there, resume a
    /// live query from there, or read the store as of then.
    ///
    /// Move it forward as the subscriber processes commits (each call is one small write of
    /// the store, not a commit of the log), and remove it when the subscriber is gone for good:
    /// a subscription left behind keeps every later commit from compaction.
    ///
    /// ```swift
    /// for try await transaction in context.historyUpdates(after: token) {
    ///     try sync(transaction)
    ///     try container.registerSubscription(named: "sync", at: transaction.token)
    /// }
    /// ```
    ///
    /// - Throws: ``RillError`` with `.misuse` for an empty name or one of more than 200 bytes,
    ///   or a token past the store's last commit; `.historyCompacted` for a token before the
    ///   log's horizon; `.readOnly` when the configuration does not allow saving.
    public func registerSubscription(named name: String, at token: HistoryToken) throws {
        guard allowsSave else {
            throw RillError(.readOnly, "the container's configuration does not allow saving")
        }
        try store.setSubscription(name, at: token.sequence)
    }

    /// Removes the durable subscription `name`: compaction may then drop the commits it kept.
    ///
    /// - Returns: false when there was no such subscription.
    @discardableResult
    public func removeSubscription(named name: String) throws -> Bool {
        guard allowsSave else {
            throw RillError(.readOnly, "the container's configuration does not allow saving")
        }
        return try store.removeSubscription(name)
    }

    /// The durable subscriptions of the store, each at the last commit it processed (those of
    /// every process and of the daemon).
    public func subscriptions() throws -> [String: HistoryToken] {
        try store.subscriptions().mapValues(HistoryToken.init(sequence:))
    }
}
