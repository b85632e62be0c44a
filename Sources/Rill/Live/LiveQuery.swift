import Dispatch
import Foundation
import Observation
import RillLocks

/// The results of a fetch, kept current: after every save to the store — from this process or
/// another — that changes them, a live query holds the new results and tells its observers how
/// they changed.
///
/// It is the counterpart of SwiftData's `@Query` and Core Data's fetched results for code on
/// Linux: a `RandomAccessCollection` of models, `Observable` (Observation framework), and the
/// sequence number of the commit its contents reflect. Its results are not re-fetched: each
/// commit is applied to them, at a cost in proportion to the records it changed (see
/// `Documentation/LiveQueries.md`).
///
/// For example:
///
/// ```swift
/// let unread = try LiveQuery(
///     FetchDescriptor<Book>(predicate: #Predicate { !$0.isRead }, sortBy: [SortDescriptor(\.title)]),
///     in: container)
/// print(unread.count, unread.sequence)
/// let observation = unread.observe(on: .main) { change in
///     print("commit \(change.sequence): \(change.insertions.count) new, \(change.removals.count) gone")
/// }
/// for await change in unread.changes { … }
/// ```
///
/// ## Changes
///
/// Each commit that changes the results gives exactly one ``ResultsChange`` (none when the
/// results stay as they were); every observer receives them in commit order, none skipped. Every
/// live query of a store advances to a commit at the same moment: once a read shows one query at
/// a commit, every later read of any of them does, and no observer hears of a commit before all
/// of them show it.
///
/// ## Threads
///
/// A live query is `Sendable`. Its contents change when a commit is applied, on the store's
/// follower thread; each read (`count`, a subscript, ``results``) sees a complete state, but two
/// reads may see two states. Take ``results`` once — an immutable snapshot that costs nothing —
/// to read several values of one state.
///
/// The live query stops following the store when it is released. It reflects saved changes
/// only, not a context's unsaved ones.
public final class LiveQuery<T: PersistentModel>: @unchecked Sendable {
    // Sendable: every mutable stored property below is guarded by `follower.publication`
    // (`snapshot`, `state`) or by its own lock (`observers`).
    //
    // What the follower touches for every commit (`snapshot`, the observers, the change) is of
    // types that are not generic: unspecialized generic code looks up type metadata at nearly
    // every step, and the follower runs this code for each query a commit changes.

    private let follower: LogFollower
    private let link: Link
    private let registrar = ObservationRegistrar()
    /// `\.results`, made once: a generic key path is costly to form on every read.
    private let resultsKeyPath: KeyPath<LiveQuery<T>, LiveResults<T>> = \.results
    /// The published results.
    private var snapshot = RowSnapshot.empty
    /// How many results this query has published (under the publication lock): a change is
    /// posted only to the observers added before its results were published.
    private var publications = 0
    /// For a query resumed from a token, until its first observer: the results at the token.
    private let resumePoint = Lock<ResumePoint?>(nil)
    private var state: State
    private let observers = Lock(LiveObservers())

    private struct State {
        var descriptor: FetchDescriptor<T>
        var error: RillError?
    }

    /// Fetches `descriptor`'s results as of the store's last commit and keeps them current.
    ///
    /// - Throws: ``RillError`` with `.unknownEntity` when `T` is not one of the container's
    ///   model types, or the errors of a fetch.
    public convenience init(_ descriptor: FetchDescriptor<T>, in container: ModelContainer) throws {
        try self.init(descriptor, in: container, resumingAfter: nil)
    }

    /// Fetches `descriptor`'s results as they were after the commit of `token`, and keeps them
    /// current from there: for an app that kept the results (or what it made of them) and the
    /// token of the last commit it processed, and comes back after a restart.
    ///
    /// The query's results are the current ones. Its first observer (either `observe(on:_:)` or
    /// ``changes``) is first told of one change that turns the
    /// results at the token into the results it starts from (nothing when they are the same),
    /// then of each later commit's change, as for any live query. Later observers start from
    /// the results as they are then.
    ///
    /// ```swift
    /// let books = try LiveQuery(descriptor, in: container, since: savedToken)
    /// for await change in books.changes {
    ///     cachedTitles = change.apply(to: cachedTitles)   // first: what happened while away
    ///     savedToken = HistoryToken(sequence: change.sequence)
    /// }
    /// ```
    ///
    /// Resuming costs what an as-of fetch at the token costs (``ModelContext/fetch(_:asOf:)-(_,HistoryToken)``):
    /// the commits since the token are read, each record they changed is put back as it was,
    /// and the query keeps a copy of the results at the token until its first observer. The
    /// change is worked out by identifier: rows that left, entered or moved, and updates of the
    /// rows whose records a commit since the token wrote.
    ///
    /// - Throws: ``RillError`` with `.misuse` when the token is past the store's last commit,
    ///   `.historyCompacted` when it is before the horizon of a compacted log (`rill compact`),
    ///   `.unknownEntity` when `T` is not one of the container's model types, or the errors of a fetch.
    public convenience init(
        _ descriptor: FetchDescriptor<T>, in container: ModelContainer, since token: HistoryToken
    )
        throws
    {
        try self.init(descriptor, in: container, resumingAfter: token.sequence)
    }

    /// Fetches `descriptor`'s results as of the store's last commit and keeps them current;
    /// with `resumingAfter`, keeps also the results at that commit for the first observer.
    private init(_ descriptor: FetchDescriptor<T>, in container: ModelContainer, resumingAfter token: UInt64?) throws {
        guard container.modelTypeNames.contains(T.entityName) else {
            throw ModelContainer.unregisteredModelError("\(T.self)")
        }
        let follower = try LogFollowers.retain(for: container.store)
        self.follower = follower
        self.state = State(descriptor: descriptor)
        self.link = Link(query: MaintainedQuery(ModelRowSource(descriptor)))
        link.owner = self
        let link = self.link
        let past = ResumeBox()
        // Every stored property is set: should this throw, the deinitializer releases the follower.
        try follower.add(link) { txn, sequence in
            if let token {
                guard token <= sequence else {
                    throw RillError(
                        .misuse, "cannot resume after commit \(token): the log's last commit is \(sequence)")
                }
                if token < sequence {
                    let store = follower.store
                    try store.log.requireRetained(token, for: "resume after commit \(token)", in: txn)
                    let query = MaintainedQuery(ModelRowSource(descriptor))
                    let entries = try store.log.entries(after: token, in: txn)
                    try query.loadWindow(
                        before: CommitContext(
                            store: store, transaction: txn, entries: entries, index: 0, snapshot: sequence))
                    let rows = query.results()
                    past.point = ResumePoint(
                        token: token, keys: rows.keys, models: rows.map(ModelRowSource<T>.element), entries: entries)
                }
            }
            try link.query.load(in: txn, store: follower.store)
            return link.publication(change: nil)
        }
        // Before `init` returns, so before any observer can be added.
        resumePoint.withLock { $0 = past.point }
    }

    /// Carries the results at the token out of the follower's job.
    private final class ResumeBox: @unchecked Sendable {
        // Sendable: written in the job, read after `add` waited for it.
        var point: ResumePoint?
    }

    /// The results of a resumed query at its token, and the commits read since.
    private struct ResumePoint: @unchecked Sendable {
        // Sendable: immutable once made; the models are Sendable, the entries are values.
        var token: UInt64
        var keys: [[UInt8]]
        var models: [T]
        /// The commits after the token, up to the one the query was loaded at.
        var entries: [LogEntry]
    }

    deinit {
        follower.remove(link)
        LogFollowers.release(follower)
        let sinks = observers.withLock { observers in
            observers.finished = true
            return observers.sinks
        }
        for (_, sink, _) in sinks { sink.finish() }
    }

    // MARK: - Contents

    /// The current results: an immutable snapshot, which costs nothing to take.
    public var results: LiveResults<T> {
        registrar.access(self, keyPath: resultsKeyPath)
        return follower.publication.withShared {
            LiveResults<T>(snapshot, sequence: follower.publishedSequenceHoldingLock)
        }
    }

    /// The sequence number of the commit the results reflect.
    public var sequence: UInt64 {
        registrar.access(self, keyPath: resultsKeyPath)
        return follower.publishedSequence
    }

    /// The descriptor the results follow; change it with ``setDescriptor(_:)``.
    public var descriptor: FetchDescriptor<T> {
        registrar.access(self, keyPath: resultsKeyPath)
        return follower.publication.withShared { state.descriptor }
    }

    /// Why the query is not following the store, or nil while it follows. It keeps its last
    /// results meanwhile.
    ///
    /// A stored record it cannot read — one that does not decode as the model (written by an
    /// older version that declared no ``PersistentModel/evolution`` for it), or on which the
    /// predicate throws — suspends the query: its observers stay, and after each commit to the
    /// entity it loads again; once the store reads (that record saved again by the current
    /// version, or deleted), the error is nil again and its observers are told of one change from
    /// the last results to the current ones. Any other failure (a damaged store) stops it for
    /// good, and its change streams end.
    public var error: RillError? {
        registrar.access(self, keyPath: resultsKeyPath)
        return follower.publication.withShared { state.error }
    }

    /// Follows another descriptor (a new search text, another sort): the results become the new
    /// descriptor's, with one change from the old results to the new ones delivered to the
    /// observers (none when they are the same).
    ///
    /// - Throws: the errors of a fetch; the query then keeps its previous descriptor.
    public func setDescriptor(_ descriptor: FetchDescriptor<T>) throws {
        let link = self.link
        try follower.perform { txn, sequence in
            let previous = link.query.source
            do {
                let change = try link.query.replaceSource(
                    ModelRowSource(descriptor), sequence: sequence, in: txn, store: self.follower.store)
                return link.publication(change: change)
            } catch {
                _ = try? link.query.replaceSource(previous, sequence: sequence, in: txn, store: self.follower.store)
                throw error
            }
        }
    }

    /// Returns once the query reflects every commit made before the call, and the changes up
    /// to it are on their way to the observers.
    public func catchUp() throws {
        try follower.perform { _, _ in nil }
    }

    // MARK: - Observing

    /// Calls `handler` on `queue` with each change, in commit order, until the returned
    /// observation is cancelled or released.
    public func observe(
        on queue: DispatchQueue, _ handler: @escaping @Sendable (ResultsChange<T>) -> Void
    ) -> LiveObservation {
        let flag = CancellationFlag()
        // Through a serial queue, shared by the observers on `queue`: in order on a concurrent
        // queue too, and one block per commit for all of them.
        return addSink(QueueSink(queue: DeliveryQueue.of(queue), flag: flag, handler: handler), flag: flag)
    }

    /// Calls `handler` isolated to `actor` (the main actor included: `observe(on: MainActor.shared)`)
    /// with each change, in commit order, until the returned observation is cancelled or released.
    public func observe<A: Actor>(
        on actor: A, _ handler: @escaping @Sendable (isolated A, ResultsChange<T>) -> Void
    ) -> LiveObservation {
        let (stream, continuation) = AsyncStream<ResultsChange<T>>.makeStream()
        let flag = CancellationFlag()
        let task = Task {
            for await change in stream where !flag.isCancelled {
                await handler(actor, change)
            }
        }
        let observation = addSink(StreamSink(continuation), flag: flag)
        continuation.onTermination = { _ in task.cancel() }
        return observation
    }

    /// The changes as an asynchronous sequence, from now on, in commit order. The sequence
    /// ends when the task iterating it is cancelled, the query stops with an ``error``, or the
    /// query is released.
    ///
    /// ```swift
    /// for await change in books.changes {
    ///     print(change)
    /// }
    /// ```
    public var changes: AsyncStream<ResultsChange<T>> {
        let (stream, continuation) = AsyncStream<ResultsChange<T>>.makeStream()
        let observation = addSink(StreamSink(continuation), flag: CancellationFlag())
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }

    private func addSink(_ sink: LiveSink, flag: CancellationFlag) -> LiveObservation {
        let resume = resumePoint.withLock { point in
            defer { point = nil }
            return point
        }
        var catchUp: ResultsChange<T>?
        var changedKeys: Set<[UInt8]> = []
        var read = resume?.entries.last?.sequence ?? 0
        if let resume {
            for entry in resume.entries {
                for change in entry.changes where change.entity == T.entityName { changedKeys.insert(change.key) }
            }
        }
        let id: Int? = observers.withLock { observers in
            guard !observers.finished else { return nil }
            let id = observers.nextID
            observers.nextID += 1
            // A change is posted to the observers its publication found (`deliver`, which waits
            // for this lock): one added now hears of the publications after `after`.
            let (current, sequence, after) = follower.publication.withShared {
                (snapshot, follower.publishedSequenceHoldingLock, publications)
            }
            if let resume {
                // The records written after the commits the query was loaded at, up to the results now.
                if sequence > read {
                    do {
                        for entry in try follower.store.entries(after: read, limit: Int(sequence - read)) {
                            for change in entry.changes where change.entity == T.entityName {
                                changedKeys.insert(change.key)
                            }
                            read = entry.sequence
                        }
                    } catch {
                        // The log could not be read: every row that stays counts as updated.
                        changedKeys.formUnion(current.keys)
                    }
                }
                let change = ResultsDiff.between(
                    old: resume.keys, oldModels: resume.models, new: current.keys,
                    newModels: current.map(ModelRowSource<T>.element), changed: changedKeys, sequence: sequence)
                if !change.isEmpty { catchUp = change }
            }
            if let catchUp { sink.post(PendingChange(models: catchUp)) }
            observers.sinks.append((id, sink, after))
            return id
        }
        guard let id else {
            sink.finish()
            flag.cancel()
            return LiveObservation {}
        }
        return LiveObservation { [weak self] in
            flag.cancel()
            let removed = self?.observers.withLock { observers -> LiveSink? in
                guard let index = observers.sinks.firstIndex(where: { $0.id == id }) else { return nil }
                return observers.sinks.remove(at: index).sink
            }
            removed?.finish()
        }
    }

    // MARK: - Publishing (follower thread)

    private func willPublish() {
        registrar.willSet(self, keyPath: resultsKeyPath)
    }

    /// Under the follower's publication lock. The results published before are handed back in
    /// `snapshot`, so that they are released later, after every observer has been notified.
    private func publish(_ snapshot: inout RowSnapshot) -> Int {
        swap(&self.snapshot, &snapshot)
        publications += 1
        return publications
    }

    /// Under the follower's publication lock, with the results of a new descriptor.
    private func publish(descriptor: FetchDescriptor<T>) {
        state.descriptor = descriptor
    }

    private func deliver(_ change: PendingChange?, publication number: Int) {
        registrar.didSet(self, keyPath: resultsKeyPath)
        guard let change else { return }
        let sinks = observers.withLock { $0.sinks }
        for (_, sink, after) in sinks where after < number { sink.post(change) }
    }

    /// A record the query cannot read (decode, or test with its predicate) suspends it: the
    /// error says why, the observers stay, and the follower tries it again after each commit to
    /// the entity, until the store reads (see `recovered`).
    private func suspend(with error: RillError) {
        registrar.willSet(self, keyPath: resultsKeyPath)
        follower.publication.withExclusive { state.error = error }
        registrar.didSet(self, keyPath: resultsKeyPath)
    }

    /// Under the follower's publication lock: the query follows again.
    private func publishRecovery() {
        state.error = nil
    }

    /// The results published last, as keys and models (on the follower's thread).
    private var publishedRows: (keys: [[UInt8]], models: [T]) {
        follower.publication.withShared { (snapshot.keys, snapshot.map(ModelRowSource<T>.element)) }
    }

    private func stop(with error: RillError) {
        follower.publication.withExclusive { state.error = error }
        let sinks = observers.withLock { observers in
            observers.finished = true
            return observers.sinks
        }
        for (_, sink, _) in sinks { sink.finish() }
    }

    /// The follower's handle on the query: the maintained results, and a weak way back.
    private final class Link: MaintainedLink {
        let query: MaintainedQuery<ModelRowSource<T>>
        weak var owner: LiveQuery<T>?

        init(query: MaintainedQuery<ModelRowSource<T>>) { self.query = query }

        func apply(_ changes: [DecodedChange], commit: CommitContext) throws -> LivePublication? {
            guard let change = try query.apply(changes, commit: commit) else { return nil }
            return Publication(
                owner: owner, snapshot: query.results(), change: PendingChange(rows: change))
        }

        /// The results of a new descriptor (or of the first load), with their change.
        func publication(change: ResultsChange<T>?) -> LivePublication {
            DescriptorPublication(
                owner: owner, snapshot: query.results(), change: change.map(PendingChange.init(models:)),
                descriptor: query.source.descriptor)
        }

        func fail(_ error: any Error) -> LivePublication {
            let failure = Self.failure(error)
            if canRecover(from: error) {
                return ClosurePublication(deliver: { [weak owner] in owner?.suspend(with: failure) })
            }
            return ClosurePublication(deliver: { [weak owner] in owner?.stop(with: failure) })
        }

        /// A stored record that does not decode as the model, or on which the predicate throws:
        /// a later save of it (by a writer of the current version) or its delete makes the store
        /// read again.
        func canRecover(from error: any Error) -> Bool {
            guard let error = error as? RillError else { return false }
            return error.code == .decodingFailed || error.code == .queryFailed
        }

        func recover(in txn: StoreSnapshot, sequence: UInt64, changed: Set<[UInt8]>) throws -> LivePublication? {
            guard let owner else { return nil }
            let previous = owner.publishedRows
            try query.load(in: txn, store: owner.follower.store)
            let results = query.results()
            let change = ResultsDiff.between(
                old: previous.keys, oldModels: previous.models, new: results.keys,
                newModels: results.map(ModelRowSource<T>.element), changed: changed, sequence: sequence)
            return RecoveryPublication(
                owner: owner, snapshot: results, change: change.isEmpty ? nil : PendingChange(models: change))
        }
    }

    /// The results of a suspended query that reads again, with their change: it follows again.
    private final class RecoveryPublication: Publication {
        override func publish() {
            super.publish()
            owner?.publishRecovery()
        }
    }

    /// New results and their change, on their way to the query: one object for the three steps.
    private class Publication: LivePublication {
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

    /// The results of a new descriptor, and the descriptor.
    private final class DescriptorPublication: Publication {
        let descriptor: FetchDescriptor<T>

        init(owner: LiveQuery<T>?, snapshot: RowSnapshot, change: PendingChange?, descriptor: FetchDescriptor<T>) {
            self.descriptor = descriptor
            super.init(owner: owner, snapshot: snapshot, change: change)
        }

        override func publish() {
            super.publish()
            owner?.publish(descriptor: descriptor)
        }
    }
}

extension LiveQuery: Observable {}

extension LiveQuery: RandomAccessCollection {
    public var startIndex: Int { 0 }
    public var endIndex: Int { results.count }
    public var count: Int { results.count }
    public subscript(position: Int) -> T { results[position] }

    /// Iterates the results as they are when iteration starts.
    public func makeIterator() -> LiveResults<T>.Iterator { results.makeIterator() }
}
