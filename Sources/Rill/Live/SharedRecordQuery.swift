import Foundation

/// One maintained result of a text query, followed by every ``RecordLiveQuery`` of this process
/// that follows the same query with the same reading of its records: the follower applies each
/// commit to it once, and its change goes to every sharer.
///
/// Sharing is exact because a maintained query's results at a commit and the change a commit
/// makes to them are functions of the query (`Query`: entity, predicate, sort, window), of how
/// its records are read (the entity's evolution and relationships, `RecordRowSource`) and of the
/// store at that commit — not of when the query started or of the rows it holds past its window.
/// A sharer joins on the follower's thread, between two commits, with the results as of the last
/// one (what a query of its own would load then); the commits after it reach every sharer of the
/// moment in one publication, so each is told of each change once, in order. A sharer that
/// resumes from an earlier commit replays the commits since then on a query of its own, then
/// joins at the last one, where its results and the shared ones are the same.
///
/// Owned by the follower's thread: the sharers and `failed` change only there (in its jobs,
/// which never run while a commit is applied); `current` is guarded by `follower.publication`.
final class SharedRecordQuery: MaintainedLink {
    let query: MaintainedQuery<RecordRowSource>
    /// Where the query is found by later sharers; nil for a query of one sharer alone.
    private weak var registry: SharedRecordQueries?
    /// The sharers, in the order they joined.
    private(set) var sharers: [Sharer] = []
    /// Set when the query stopped: it takes no sharer and reports no progress then.
    private(set) var failed = false
    /// The published results (under `follower.publication`).
    var current: RowSnapshot?

    /// The store, to load the query again (see `recover`).
    private let store: Store

    init(query: MaintainedQuery<RecordRowSource>, registry: SharedRecordQueries?, store: Store) {
        self.query = query
        self.registry = registry
        self.store = store
    }

    /// One ``RecordLiveQuery``'s place in a shared query.
    final class Sharer {
        let handler: @Sendable (RecordLiveQuery.Event) -> Void
        /// The query it follows, once it joined (written under `follower.publication`, on the
        /// follower's thread, which alone reads it without the lock). Weak: the follower owns
        /// the query, which owns its sharers, and a follower that stops drops its queries.
        weak var group: SharedRecordQuery?
        /// The last results of a query that stopped, which the follower no longer owns (under
        /// `follower.publication`).
        var stoppedResults: RowSnapshot?

        init(handler: @escaping @Sendable (RecordLiveQuery.Event) -> Void) {
            self.handler = handler
        }
    }

    // MARK: - Sharers

    /// The publication of `sharer` joining, with `events` for it alone: its results, then its
    /// group (under the publication lock), then its events.
    func join(_ sharer: Sharer, events: [RecordLiveQuery.Event]) -> LivePublication {
        sharers.append(sharer)
        let results = query.results()
        let handler = sharer.handler
        return ClosurePublication(
            publish: { [self] in
                current = results
                sharer.group = self
            },
            deliver: { for event in events { handler(event) } })
    }

    /// Takes `sharer` out; returns true when none is left (the query is then out of the
    /// registry, and the caller stops following it).
    func leave(_ sharer: Sharer) -> Bool {
        sharers.removeAll { $0 === sharer }
        guard sharers.isEmpty else { return false }
        registry?.remove(self)
        return true
    }

    // MARK: - FollowedQuery

    func apply(_ changes: [DecodedChange], commit: CommitContext) throws -> LivePublication? {
        guard let change = try query.apply(changes, commit: commit) else { return nil }
        let results = query.results()
        let event = RecordLiveQuery.Event.change(change.results(RecordRowSource.element))
        let sharers = self.sharers
        return ClosurePublication(
            publish: { [self] in current = results },
            deliver: { for sharer in sharers { sharer.handler(event) } })
    }

    func fail(_ error: any Error) -> LivePublication {
        failed = true
        registry?.remove(self)
        let failure = Self.failure(error)
        let sharers = self.sharers
        let results = current
        return ClosurePublication(
            publish: { for sharer in sharers { sharer.stoppedResults = results } },
            deliver: { for sharer in sharers { sharer.handler(.failed(failure)) } })
    }

    /// Commits the query had not read were compacted away (another process): it loads again at
    /// the head, and its sharers are told the change from the results they had.
    func canRecover(from error: any Error) -> Bool { (error as? RillError)?.code == .historyCompacted }

    func recover(in txn: StoreSnapshot, sequence: UInt64, changed: Set<[UInt8]>?) throws -> LivePublication? {
        let previous = current
        try query.load(in: txn, store: store)
        let results = query.results()
        let change = ResultsDiff.reloaded(
            old: previous?.keys ?? [], oldModels: previous?.map(RecordRowSource.element) ?? [], new: results.keys,
            newModels: results.map(RecordRowSource.element), changed: changed, sequence: sequence)
        let sharers = self.sharers
        return ClosurePublication(
            publish: { [self] in current = results },
            deliver: { if !change.isEmpty { for sharer in sharers { sharer.handler(.change(change)) } } })
    }
}
