import Foundation

/// A live query's place in the link it follows (`LiveQuery.Link`). Not generic: code generic
/// over a model type is not specialized for the models of other modules, and a link walks its
/// owners for every commit.
final class LinkOwner {
    /// The `LiveQuery`. Weak: the query's release ends its place.
    weak var query: AnyObject?
    /// The `LiveQuery.Link` it follows (on the follower's thread only). Weak: the follower owns
    /// the link, which owns its owners, and a follower that stops drops its links.
    weak var link: AnyObject?
}

// The follower's side of a live query: the maintained result it follows, shared with the live
// queries of the same descriptor, and the publications of its new results.
extension LiveQuery {
    /// A maintained result as the follower follows it, and the live queries it publishes to: one,
    /// or every live query of the same descriptor (`ModelRowSource.sharingKey`). Its owners change
    /// on the follower's thread only, in jobs, between two commits: a live query that joins is
    /// given the results as of the last commit, and is published to from the next one on.
    final class Link: MaintainedLink {
        let query: MaintainedQuery<ModelRowSource<T>>
        /// The results its owners show, as last published (under the follower's publication lock).
        let published = PublishedRows()
        /// The live queries it publishes to, in the order they joined.
        private var owners: [LinkOwner] = [] {
            didSet {
                ownersVersion &+= 1
                // What was gathered lets go of the observers of a query that left now.
                gathered = nil
            }
        }
        /// Advanced whenever `owners` changes.
        private var ownersVersion = 0
        /// Its owners' observers, as last gathered, and the owners' version then (on the
        /// follower's thread).
        private var gathered: (audience: LinkAudience, ownersVersion: Int)?
        /// The follower, which owns the link.
        private unowned let follower: LogFollower
        /// Where live queries of the same descriptor find it, while it can be joined.
        private var sharing: (registry: SharedModelQueries, key: AnyHashable)?

        /// The live query of `owner`, while it lives.
        static func query(of owner: LinkOwner) -> LiveQuery<T>? {
            owner.query.map { unsafeDowncast($0, to: LiveQuery<T>.self) }
        }

        /// The link `owner` follows.
        static func of(_ owner: LinkOwner) -> Link? { owner.link.map { unsafeDowncast($0, to: Link.self) } }

        private init(query: MaintainedQuery<ModelRowSource<T>>, follower: LogFollower) {
            self.query = query
            self.follower = follower
        }

        /// Lets go of the observers gathered (one was cancelled).
        func forgetAudience() { gathered = nil }

        /// The observers of `owners`, the owners at `version`: gathered again unless they were
        /// gathered for that version at the follower's current observer generation (on the
        /// follower's thread).
        func audience(of owners: [LinkOwner], version: Int) -> LinkAudience {
            let generation = follower.observerGeneration
            if let gathered, gathered.ownersVersion == version, gathered.audience.generation == generation {
                return gathered.audience
            }
            var audience = LinkAudience(generation: generation)
            for owner in owners {
                guard let query = Self.query(of: owner) else { continue }
                if query.isTracked { audience.addTracked(owner) }
                query.gatherObservers(into: &audience)
            }
            if version == ownersVersion { gathered = (audience, version) }
            return audience
        }

        /// The link of `source`: the one live queries of the same descriptor follow, when
        /// `sharing` and there is one; else a new one, loaded as of the transaction and followed
        /// (and found by the next ones). On the follower's thread, in a job.
        static func following(
            _ source: ModelRowSource<T>, sharing: Bool, in txn: StoreSnapshot, follower: LogFollower
        ) throws -> Link {
            let key = sharing ? source.sharingKey : nil
            let registry = follower.sharedModelQueries
            if let key, let shared = registry.link(for: key) { return unsafeDowncast(shared, to: Link.self) }
            let link = Link(query: MaintainedQuery(source), follower: follower)
            try link.query.load(in: txn, store: follower.store)
            if let key {
                link.sharing = (registry, key)
                registry.add(link, for: key)
            }
            follower.follow(link)
            return link
        }

        /// The publication of `owner` joining (or staying, with a new descriptor): its results and
        /// descriptor, with `change` from its results before; `following` when it follows again
        /// (its error, if any, is cleared).
        func join(_ owner: LinkOwner, change: ResultsChange<T>?, following: Bool = false) -> LivePublication {
            if !owners.contains(where: { $0 === owner }) { owners.append(owner) }
            return DescriptorPublication(
                owner: Self.query(of: owner), rows: published, snapshot: query.results(),
                change: change.map(PendingChange.init(models:)),
                descriptor: query.source.descriptor, clearsError: following)
        }

        /// Takes `owner` out; true when none is left (the caller then stops following the link).
        func leave(_ owner: LinkOwner) -> Bool {
            owners.removeAll { $0 === owner }
            guard owners.isEmpty else { return false }
            unshare()
            return true
        }

        /// No later live query joins the link.
        private func unshare() {
            if let (registry, key) = sharing { registry.remove(self, for: key) }
            sharing = nil
        }

        func apply(_ changes: [DecodedChange], commit: CommitContext) throws -> LivePublication? {
            guard let change = try query.apply(changes, commit: commit) else { return nil }
            // The owners as of the commit: a live query that leaves before the change is delivered
            // (in a job of the same step) is told of it still.
            return OwnersPublication(
                link: self, owners: owners, ownersVersion: ownersVersion, follower: follower,
                snapshot: query.results(), change: PendingChange(rows: change))
        }

        func fail(_ error: any Error) -> LivePublication {
            // A link that stopped is not joined: a live query of its descriptor started later loads anew.
            unshare()
            let failure = Self.failure(error)
            let queries = owners.map(Self.query(of:))
            if canRecover(from: error) {
                return ClosurePublication(deliver: {
                    for query in queries { query?.suspend(with: failure) }
                })
            }
            return ClosurePublication(deliver: {
                for query in queries { query?.stop(with: failure) }
            })
        }

        /// A stored record that does not decode as the model, or on which the predicate throws:
        /// a later save of it (by a writer of the current version) or its delete makes the store
        /// read again.
        func canRecover(from error: any Error) -> Bool {
            guard let error = error as? RillError else { return false }
            return error.code == .decodingFailed || error.code == .queryFailed || error.code == .historyCompacted
        }

        func recover(in txn: StoreSnapshot, sequence: UInt64, changed: Set<[UInt8]>?) throws -> LivePublication? {
            // Every owner published the same results: one of them gives the change.
            guard let owner = owners.lazy.compactMap(Self.query(of:)).first else { return nil }
            let previous = owner.publishedRows
            try query.load(in: txn, store: owner.follower.store)
            let results = query.results()
            let change = ResultsDiff.reloaded(
                old: previous.keys, oldModels: previous.models, new: results.keys,
                newModels: results.map(ModelRowSource<T>.element), changed: changed, sequence: sequence)
            let pending = change.isEmpty ? nil : PendingChange(models: change)
            return Publications(
                owners.map {
                    RecoveryPublication(owner: Self.query(of: $0), rows: published, snapshot: results, change: pending)
                })
        }
    }

    /// The publications of a link's owners for one commit, in the order they joined.
    final class Publications: LivePublication {
        let parts: [LivePublication]

        init(_ parts: [LivePublication]) { self.parts = parts }

        override func willPublish() { for part in parts { part.willPublish() } }
        override func publish() { for part in parts { part.publish() } }
        override func deliver() { for part in parts { part.deliver() } }
    }

    /// A commit's new results and change for every live query of a link: published once for all
    /// of them (they show the link's `PublishedRows`), and delivered to their observers as
    /// gathered (`LinkAudience`), so that a commit costs the follower nothing for each live query
    /// that shares the result, unless Observation tracks it.
    final class OwnersPublication: LivePublication {
        private let link: Link
        private let owners: [LinkOwner]
        private let ownersVersion: Int
        private let follower: LogFollower
        /// The new results; once published, the results shown before, released with the
        /// publication (after every query's change is delivered).
        private var snapshot: RowSnapshot
        private let change: PendingChange
        /// The publication round, once published.
        private var round = 0

        init(
            link: Link, owners: [LinkOwner], ownersVersion: Int, follower: LogFollower, snapshot: RowSnapshot,
            change: PendingChange
        ) {
            self.link = link
            self.owners = owners
            self.ownersVersion = ownersVersion
            self.follower = follower
            self.snapshot = snapshot
            self.change = change
        }

        override func willPublish() {
            for owner in link.audience(of: owners, version: ownersVersion).tracked {
                Link.query(of: owner)?.willPublish()
            }
        }

        override func publish() {
            swap(&link.published.snapshot, &snapshot)
            round = follower.publicationRoundHoldingLock
        }

        override func deliver() {
            // Gathered after the publication: an observer added since is added after its round.
            let audience = link.audience(of: owners, version: ownersVersion)
            for owner in audience.tracked { Link.query(of: owner)?.didPublish() }
            audience.post(change, round: round)
        }
    }

    /// The results of a suspended query that reads again, with their change: it follows again.
    final class RecoveryPublication: Publication {
        override func publish() {
            super.publish()
            owner?.publishRecovery()
        }
    }

    /// New results and their change, on their way to the query: one object for the three steps.
    class Publication: LivePublication {
        weak var owner: LiveQuery<T>?
        /// The link's published results, which the query shows from now on.
        let rows: PublishedRows
        /// Swapped with the results published before, which then live as long as the
        /// publication: until the follower has delivered every query's change.
        var snapshot: RowSnapshot
        let change: PendingChange?

        init(owner: LiveQuery<T>?, rows: PublishedRows, snapshot: RowSnapshot, change: PendingChange?) {
            self.owner = owner
            self.rows = rows
            self.snapshot = snapshot
            self.change = change
        }

        /// The publication round, once published.
        private var number = 0

        override func willPublish() { owner?.willPublish() }
        override func publish() { number = owner?.publish(&snapshot, to: rows) ?? 0 }
        override func deliver() {
            var batch = DeliveryBatch()
            owner?.deliver(change, publication: number, batch: &batch)
            if let change { batch.post(change) }
        }
    }

    /// The results of a new descriptor, and the descriptor; with `clearsError`, the query follows
    /// again.
    final class DescriptorPublication: Publication {
        let descriptor: FetchDescriptor<T>
        let clearsError: Bool

        init(
            owner: LiveQuery<T>?, rows: PublishedRows, snapshot: RowSnapshot, change: PendingChange?,
            descriptor: FetchDescriptor<T>, clearsError: Bool
        ) {
            self.descriptor = descriptor
            self.clearsError = clearsError
            super.init(owner: owner, rows: rows, snapshot: snapshot, change: change)
        }

        override func publish() {
            super.publish()
            owner?.publish(descriptor: descriptor)
            if clearsError { owner?.publishRecovery() }
        }
    }
}
