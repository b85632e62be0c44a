import Foundation

// The follower's side of a live query: the maintained result it follows, shared with the live
// queries of the same descriptor, and the publications of its new results.
extension LiveQuery {
    /// A maintained result as the follower follows it, and the live queries it publishes to: one,
    /// or every live query of the same descriptor (`ModelRowSource.sharingKey`). Its owners change
    /// on the follower's thread only, in jobs, between two commits: a live query that joins is
    /// given the results as of the last commit, and is published to from the next one on.
    final class Link: MaintainedLink {
        let query: MaintainedQuery<ModelRowSource<T>>
        /// The live queries it publishes to, in the order they joined.
        private var owners: [Owner] = []
        /// Where live queries of the same descriptor find it, while it can be joined.
        private var sharing: (registry: SharedModelQueries, key: AnyHashable)?

        /// A live query's place in a link.
        final class Owner {
            weak var query: LiveQuery<T>?
            /// The link it follows (on the follower's thread only). Weak: the follower owns the
            /// link, which owns its owners, and a follower that stops drops its links.
            weak var link: Link?
        }

        private init(query: MaintainedQuery<ModelRowSource<T>>) { self.query = query }

        /// The link of `source`: the one live queries of the same descriptor follow, when
        /// `sharing` and there is one; else a new one, loaded as of the transaction and followed
        /// (and found by the next ones). On the follower's thread, in a job.
        static func following(
            _ source: ModelRowSource<T>, sharing: Bool, in txn: StoreSnapshot, follower: LogFollower
        ) throws -> Link {
            let key = sharing ? source.sharingKey : nil
            let registry = follower.sharedModelQueries
            if let key, let shared = registry.link(for: key) { return unsafeDowncast(shared, to: Link.self) }
            let link = Link(query: MaintainedQuery(source))
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
        func join(_ owner: Owner, change: ResultsChange<T>?, following: Bool = false) -> LivePublication {
            if !owners.contains(where: { $0 === owner }) { owners.append(owner) }
            return DescriptorPublication(
                owner: owner.query, snapshot: query.results(), change: change.map(PendingChange.init(models:)),
                descriptor: query.source.descriptor, clearsError: following)
        }

        /// Takes `owner` out; true when none is left (the caller then stops following the link).
        func leave(_ owner: Owner) -> Bool {
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
            let snapshot = query.results()
            let pending = PendingChange(rows: change)
            if owners.count == 1 { return Publication(owner: owners[0].query, snapshot: snapshot, change: pending) }
            return Publications(owners.map { Publication(owner: $0.query, snapshot: snapshot, change: pending) })
        }

        func fail(_ error: any Error) -> LivePublication {
            // A link that stopped is not joined: a live query of its descriptor started later loads anew.
            unshare()
            let failure = Self.failure(error)
            let queries = owners.map(\.query)
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
            return error.code == .decodingFailed || error.code == .queryFailed
        }

        func recover(in txn: StoreSnapshot, sequence: UInt64, changed: Set<[UInt8]>) throws -> LivePublication? {
            // Every owner published the same results: one of them gives the change.
            guard let owner = owners.lazy.compactMap(\.query).first else { return nil }
            let previous = owner.publishedRows
            try query.load(in: txn, store: owner.follower.store)
            let results = query.results()
            let change = ResultsDiff.between(
                old: previous.keys, oldModels: previous.models, new: results.keys,
                newModels: results.map(ModelRowSource<T>.element), changed: changed, sequence: sequence)
            let pending = change.isEmpty ? nil : PendingChange(models: change)
            return Publications(
                owners.map { RecoveryPublication(owner: $0.query, snapshot: results, change: pending) })
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
        /// Swapped with the results published before, which then live as long as the
        /// publication: until the follower has delivered every query's change.
        var snapshot: RowSnapshot
        let change: PendingChange?

        init(owner: LiveQuery<T>?, snapshot: RowSnapshot, change: PendingChange?) {
            self.owner = owner
            self.snapshot = snapshot
            self.change = change
        }

        /// The number of the publication, once published.
        private var number = 0

        override func willPublish() { owner?.willPublish() }
        override func publish() { number = owner?.publish(&snapshot) ?? 0 }
        override func deliver() { owner?.deliver(change, publication: number) }
    }

    /// The results of a new descriptor, and the descriptor; with `clearsError`, the query follows
    /// again.
    final class DescriptorPublication: Publication {
        let descriptor: FetchDescriptor<T>
        let clearsError: Bool

        init(
            owner: LiveQuery<T>?, snapshot: RowSnapshot, change: PendingChange?, descriptor: FetchDescriptor<T>,
            clearsError: Bool
        ) {
            self.descriptor = descriptor
            self.clearsError = clearsError
            super.init(owner: owner, snapshot: snapshot, change: change)
        }

        override func publish() {
            super.publish()
            owner?.publish(descriptor: descriptor)
            if clearsError { owner?.publishRecovery() }
        }
    }
}
