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
package final class RecordLiveQuery: @unchecked Sendable {
    // Sendable: `current` is guarded by `follower.publication`; the link's `failed` is used on the
    // follower thread only; the rest is immutable.

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
    private let link: Link
    private var current: RowSnapshot?
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
    /// - Throws: ``RillError`` with `.misuse` when `since` is past the log's last commit; the
    ///   errors of `Store.check(_:)` (the query names a field the entity does not have, or
    ///   compares mismatched kinds), before anything is followed; or the errors of a fetch.
    package init(
        _ query: Query, store: Store, since: UInt64? = nil, reportingResultsAtSince: Bool = false,
        handler: @escaping @Sendable (Event) -> Void
    ) throws {
        self.query = query
        try store.check(query)
        let source = try RecordRowSource(query, store: store)
        let follower = try LogFollowers.retain(for: store)
        self.follower = follower
        let link = Link(query: MaintainedQuery(source), handler: handler)
        self.link = link
        link.owner = self
        // Every stored property is set: should this throw, the deinitializer releases the follower.
        try follower.add(link) { txn, sequence in
            guard let since, since < sequence else {
                if let since, since > sequence {
                    throw RillError(
                        .misuse, "cannot resume after commit \(since): the log's last commit is \(sequence)")
                }
                try link.query.load(in: txn, store: store)
                let results = link.query.results()
                let initial = since == nil || reportingResultsAtSince
                return link.publication(
                    results, events: initial ? [.initial(results.map(RecordRowSource.element), sequence: sequence)] : []
                )
            }
            // Commits of related entities are not replayed here: the follower routes them live only.
            guard link.query.source.relationships == nil else {
                throw RillError(
                    .misuse,
                    "a query that reads through relationships cannot resume after commit \(since): "
                        + "follow it again from its current results")
            }
            // The results as they were at `since`, then each later commit applied in turn.
            try store.log.requireRetained(since, for: "resume after commit \(since)", in: txn)
            let entries = try store.log.entries(after: since, in: txn)
            let context = CommitContext(
                store: store, transaction: txn, entries: entries, index: 0, snapshot: sequence)
            try link.query.loadWindow(before: context)
            var events: [Event] = []
            if reportingResultsAtSince {
                events.append(.initial(link.query.results().map(RecordRowSource.element), sequence: since))
            }
            for (index, entry) in entries.enumerated() {
                context.index = index
                let changes = entry.changes.filter { $0.entity == query.entity }.map { DecodedChange($0) }
                guard !changes.isEmpty, let change = try link.query.apply(changes, commit: context) else {
                    continue
                }
                events.append(.change(change.results(RecordRowSource.element)))
            }
            return link.publication(link.query.results(), events: events)
        }
    }

    deinit {
        follower.remove(link)
        LogFollowers.release(follower)
    }

    /// The current results and the commit they reflect.
    package var results: (rows: [QueryRow], sequence: UInt64) {
        follower.publication.withShared {
            (current?.map(RecordRowSource.element) ?? [], follower.publishedSequenceHoldingLock)
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
        let link = self.link
        follower.schedule { _, sequence in
            guard link.owner != nil, !link.failed else { return nil }
            let handler = link.handler
            return ClosurePublication(deliver: { handler(.progress(sequence)) })
        }
    }

    /// Returns once the query reflects every commit made before the call, and the handler has
    /// been told of the changes up to it.
    package func catchUp() throws {
        try follower.perform { _, _ in nil }
    }

    /// The follower's handle on the query.
    private final class Link: MaintainedLink {
        let query: MaintainedQuery<RecordRowSource>
        let handler: @Sendable (Event) -> Void
        weak var owner: RecordLiveQuery?
        /// Set when the query stopped: it reports no progress then. Used on the follower thread only.
        var failed = false

        init(query: MaintainedQuery<RecordRowSource>, handler: @escaping @Sendable (Event) -> Void) {
            self.query = query
            self.handler = handler
        }

        func apply(_ changes: [DecodedChange], commit: CommitContext) throws -> LivePublication? {
            guard let change = try query.apply(changes, commit: commit) else { return nil }
            return publication(
                query.results(), events: [.change(change.results(RecordRowSource.element))])
        }

        func publication(_ results: RowSnapshot, events: [Event]) -> LivePublication {
            let handler = self.handler
            return ClosurePublication(
                publish: { [weak owner] in owner?.current = results },
                deliver: { for event in events { handler(event) } })
        }

        func fail(_ error: any Error) -> LivePublication {
            failed = true
            let failure = Self.failure(error)
            let handler = self.handler
            return ClosurePublication(deliver: { handler(.failed(failure)) })
        }
    }
}
