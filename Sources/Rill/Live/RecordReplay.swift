import Foundation

/// The changes a text query's results went through between two commits of the log: the results
/// as they were at the first, then the change each later commit up to the second made to them —
/// what `rill watch --from A --to B` prints.
///
/// It is worked out in one snapshot of the store, by the live queries' own maintenance (the same
/// windows, sorts and changes as a ``RecordLiveQuery`` resumed at `start` would report), and
/// then the snapshot ends: nothing follows the log, and no follower is registered. Applying each
/// change of ``changes`` in turn to ``initial`` gives the results after each commit that changed
/// them, ending with the results at ``end``.
///
/// Its cost is that of resuming a live query at `start`: every match of the query as it was at
/// `start` is loaded, and every commit from `start` to the head is read (those after `end` only
/// to correct the records that the snapshot shows at the head); then each commit up to `end`
/// costs the work a live query does for it. The changes are held in memory until returned, so
/// that no read stays open while a caller writes them out.
///
/// For example, how a query's first ten rows changed between commits 100 and 200:
///
///     let replay = try RecordReplay(query, store: store, from: 100, to: 200)
///     var rows = replay.initial
///     for change in replay.changes { change.apply(to: &rows) }
///     // rows: the results at commit 200
package struct RecordReplay: Sendable {
    /// The query replayed.
    package let query: Query
    /// The commit the initial results reflect (0: the empty store, before the first commit).
    package let start: UInt64
    /// The last commit replayed.
    package let end: UInt64
    /// The results as they were at `start`.
    package let initial: [QueryRow]
    /// The change of each commit after `start` up to `end` that changed the results, in commit
    /// order (a commit that left them as they were has none).
    package let changes: [ResultsChange<QueryRow>]

    /// Replays `query` on `store` from the commit `start` to the commit `end`.
    ///
    /// - Parameters:
    ///   - start: the commit whose results come first; 0 for the empty store before the first
    ///     commit.
    ///   - end: the last commit whose change is reported; nil for the log's last commit (the head
    ///     as the snapshot sees it).
    /// - Throws: ``RillError`` with `.misuse` when `start` is after `end`, or when `end` (or, with
    ///   no `end`, `start`) is past the log's last commit, each naming the commit; the errors of
    ///   `Store.check(_:)` (the query names a field the entity does not have, or compares
    ///   mismatched kinds), before the log is read; the errors of reading the store.
    package init(_ query: Query, store: Store, from start: UInt64, to end: UInt64? = nil) throws {
        if let end, start > end {
            throw RillError(.misuse, "cannot replay from commit \(start) to commit \(end): \(start) is after \(end)")
        }
        try store.check(query)
        let replayed = try store.read { snapshot in
            let head = try store.log.head(in: snapshot)
            let last = end ?? head
            guard last <= head else {
                throw RillError(.misuse, "cannot replay to commit \(last): the log's last commit is \(head)")
            }
            // Without `end`, a start past the head (with one, `start <= end <= head`).
            guard start <= head else {
                throw RillError(.misuse, "cannot replay from commit \(start): the log's last commit is \(head)")
            }
            return try Self.replay(query, store: store, in: snapshot, from: start, to: last)
        }
        self.query = query
        self.start = start
        self.end = replayed.end
        self.initial = replayed.initial
        self.changes = replayed.changes
    }

    /// The replay in `snapshot`, whose head is at or after `end`.
    private static func replay(
        _ query: Query, store: Store, in snapshot: StoreSnapshot, from start: UInt64, to end: UInt64
    ) throws -> (end: UInt64, initial: [QueryRow], changes: [ResultsChange<QueryRow>]) {
        let source = try RecordRowSource(query, store: store, in: snapshot)
        guard source.relationships == nil else {
            throw RillError(
                .misuse,
                "a query that reads through relationships cannot be replayed: related records are read as they are now")
        }
        let maintained = MaintainedQuery(source)
        let head = try store.log.head(in: snapshot)
        // The batch runs to the head the snapshot sees, not to `end`: the rows it loads are the
        // head's, and every record a later commit changed must be put back as it was at `start`.
        try store.log.requireRetained(start, for: "replay from commit \(start)", in: snapshot)
        let entries = try store.log.entries(after: start, in: snapshot)
        let context = CommitContext(store: store, transaction: snapshot, entries: entries, index: 0, snapshot: head)
        try maintained.loadWindow(before: context)
        let initial = maintained.results().map(RecordRowSource.element)
        var changes: [ResultsChange<QueryRow>] = []
        for (index, entry) in entries.enumerated() {
            guard entry.sequence <= end else { break }
            context.index = index
            let decoded = entry.changes.filter { $0.entity == query.entity }.map { DecodedChange($0) }
            guard !decoded.isEmpty, let change = try maintained.apply(decoded, commit: context) else { continue }
            changes.append(change.results(RecordRowSource.element))
        }
        return (end, initial, changes)
    }
}
