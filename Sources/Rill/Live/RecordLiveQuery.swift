import Foundation
import RillLocks
import Synchronization

/// A live query over schema-less records, from the text query language: what `rill watch` and
/// `rill serve` follow, without the model types.
///
/// It is maintained by the store's follower like a ``LiveQuery`` (the same incremental
/// maintenance, windows included) and tells `handler`, on the follower's thread, of its initial
/// results and then of each change, in commit order, none skipped. `handler` must return quickly
/// and must not wait for the follower (a save and its `catchUp`, for example): it holds up every
/// live query of the store while it runs.
///
/// Live queries of one query share its maintained result (`SharedRecordQuery`): a commit costs
/// a thousand subscribers of ten queries what it costs ten queries, and each is told what a
/// query of its own would be told — its own initial results or resumption, every change in
/// order once, until it is released.
package final class RecordLiveQuery: @unchecked Sendable {
    // Sendable: the sharer's group is guarded by `follower.publication`; the rest is immutable.

    /// What the handler is told.
    package enum Event: Sendable {
        /// The results as of a commit: the first event of a query that starts without `since`,
        /// or of one that resumes with `reportingResultsAtSince` (its results at `since`).
        case initial([QueryRow], sequence: UInt64)
        /// How one commit changed the results.
        case change(ResultsChange<QueryRow>)
        /// The query stopped following the store (an unreadable record, for example).
        case failed(RillError)
        /// The results are as of this commit, and the handler has been told of every change up
        /// to it: the commits since the last event left them as they were. Sent only when asked
        /// for (``reportProgress()``), so that a subscriber of a quiet query can move its resume
        /// position forward.
        case progress(UInt64)
    }

    private let follower: LogFollower
    private let sharer: SharedRecordQuery.Sharer
    package let query: Query

    /// Starts following `query` on `store`.
    ///
    /// - Parameters:
    ///   - since: resume after this commit: instead of the initial results, the handler is told
    ///     of the change each later commit made to the results as they were at `since`, then
    ///     goes on live. Nil: start with the current results.
    ///   - reportingResultsAtSince: with `since`, tell the handler first of the results as they
    ///     were at `since` (an `.initial` event with that sequence), for a handler that shows
    ///     the results rather than only their changes.
    ///   - sharing: whether the query may share its maintained result with the other live
    ///     queries of the same query (false: a result of its own, as the tests' reference).
    /// - Throws: ``RillError`` with `.misuse` when `since` is past the log's last commit; the
    ///   errors of `Store.check(_:)` (the query names a field the entity does not have, or
    ///   compares mismatched kinds), before anything is followed; or the errors of a fetch.
    package init(
        _ query: Query, store: Store, since: UInt64? = nil, reportingResultsAtSince: Bool = false,
        sharing: Bool = true, handler: @escaping @Sendable (Event) -> Void
    ) throws {
        self.query = query
        try store.check(query)
        let source = try RecordRowSource(query, store: store)
        let follower = try LogFollowers.retain(for: store)
        self.follower = follower
        let sharer = SharedRecordQuery.Sharer(handler: handler)
        self.sharer = sharer
        // Every stored property is set: should this throw, the deinitializer releases the follower.
        try follower.perform { txn, sequence in
            let registry = sharing ? follower.sharedRecordQueries : nil
            guard let since, since < sequence else {
                if let since, since > sequence {
                    throw RillError(
                        .misuse, "cannot resume after commit \(since): the log's last commit is \(sequence)")
                }
                let initial = since == nil || reportingResultsAtSince
                let group: SharedRecordQuery
                if let shared = registry?.group(for: source) {
                    group = shared
                } else {
                    let query = MaintainedQuery(source)
                    try query.load(in: txn, store: store)
                    group = Self.follow(query, registry: registry, follower: follower)
                }
                let results =
                    initial
                    ? [Event.initial(group.query.results().map(RecordRowSource.element), sequence: sequence)] : []
                return group.join(sharer, events: results)
            }
            // Commits of related entities are not replayed here: the follower routes them live only.
            guard source.relationships == nil else {
                throw RillError(
                    .misuse,
                    "a query that reads through relationships cannot resume after commit \(since): "
                        + "follow it again from its current results")
            }
            // The results as they were at `since`, then each later commit applied in turn, on a
            // query of its own; at the last commit it joins the shared one, whose results are
            // the same there.
            try store.log.requireRetained(since, for: "resume after commit \(since)", in: txn)
            let entries = try store.log.entries(after: since, in: txn)
            let context = CommitContext(
                store: store, transaction: txn, entries: entries, index: 0, snapshot: sequence)
            let replay = MaintainedQuery(source)
            try replay.loadWindow(before: context)
            var events: [Event] = []
            if reportingResultsAtSince {
                events.append(.initial(replay.results().map(RecordRowSource.element), sequence: since))
            }
            for (index, entry) in entries.enumerated() {
                context.index = index
                let changes = entry.changes.filter { $0.entity == query.entity }.map { DecodedChange($0) }
                guard !changes.isEmpty, let change = try replay.apply(changes, commit: context) else {
                    continue
                }
                events.append(.change(change.results(RecordRowSource.element)))
            }
            let group = registry?.group(for: source) ?? Self.follow(replay, registry: registry, follower: follower)
            return group.join(sharer, events: events)
        }
    }

    /// A shared query of `query`, followed from now on, and found in `registry` when there is one.
    private static func follow(
        _ query: MaintainedQuery<RecordRowSource>, registry: SharedRecordQueries?, follower: LogFollower
    ) -> SharedRecordQuery {
        let group = SharedRecordQuery(query: query, registry: registry, store: follower.store)
        registry?.add(group)
        follower.follow(group)
        return group
    }

    deinit {
        let follower = self.follower
        let sharer = self.sharer
        follower.schedule { _, _ in
            // The last sharer out stops the shared query.
            if let group = sharer.group, group.leave(sharer) { follower.unfollow(group) }
            return nil
        }
        LogFollowers.release(follower)
    }

    /// The current results and the commit they reflect.
    package var results: (rows: [QueryRow], sequence: UInt64) {
        follower.publication.withShared {
            (
                (sharer.group?.current ?? sharer.stoppedResults)?.map(RecordRowSource.element) ?? [],
                follower.publishedSequenceHoldingLock
            )
        }
    }

    /// The commit the published results reflect (cheaply, without copying them); the handler may
    /// not have been told of its change yet.
    package var sequence: UInt64 { follower.publishedSequence }

    /// Asks for a ``Event/progress(_:)`` event; returns at once. Once the follower has applied
    /// every commit made before the call, the handler is told of the commit it reached — after
    /// the changes of every commit up to it, so that the sequence it carries never names a
    /// commit whose change the handler has still to be told of. A query that stopped (or is
    /// gone) reports nothing.
    package func reportProgress() {
        let sharer = self.sharer
        follower.schedule { [weak self] _, sequence in
            guard self != nil, let group = sharer.group, !group.failed else { return nil }
            let handler = sharer.handler
            return ClosurePublication(deliver: { handler(.progress(sequence)) })
        }
    }

    /// Returns once the query reflects every commit made before the call, and the handler has
    /// been told of the changes up to it.
    package func catchUp() throws {
        try follower.perform { _, _ in nil }
    }

    /// Whether this query and `other` follow one shared result.
    func sharesResult(with other: RecordLiveQuery) -> Bool {
        follower.publication.withShared { sharer.group != nil && sharer.group === other.sharer.group }
    }
}
