import Dispatch
import Foundation
import Observation
import RillLocks
import Synchronization

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

    let follower: LogFollower
    /// The query's place in the maintained result it follows (`Link`), which it shares with the
    /// live queries of the same descriptor when their sameness can be decided (see `sharingKey`).
    private let owner = LinkOwner()
    /// Whether it may share a maintained result.
    private let sharing: Bool
    private let registrar = ObservationRegistrar()
    /// Whether the query was ever read through what the registrar tracks. Until it is, nothing
    /// can be observing it through Observation (`withObservationTracking` learns what to observe
    /// from those reads), and a commit skips the registrar: a live query followed through
    /// `observe(on:_:)` or ``changes`` alone costs a commit no Observation work.
    private let tracked = Atomic(false)
    /// `\.results`, made once: a generic key path is costly to form on every read.
    private let resultsKeyPath: KeyPath<LiveQuery<T>, LiveResults<T>> = \.results
    /// Where the published results are: the results of the maintained result the query
    /// follows, shared with every live query that follows it too, so that a commit publishes
    /// them once for all of them.
    private var published = PublishedRows()
    /// The published results.
    private var snapshot: RowSnapshot { published.snapshot }
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

    /// A live query that shares no maintained result when `sharing` is false (the tests' reference).
    package convenience init(_ descriptor: FetchDescriptor<T>, in container: ModelContainer, sharing: Bool) throws {
        try self.init(descriptor, in: container, resumingAfter: nil, sharing: sharing)
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
    private init(
        _ descriptor: FetchDescriptor<T>, in container: ModelContainer, resumingAfter token: UInt64?,
        sharing: Bool = true
    ) throws {
        guard container.modelTypeNames.contains(T.entityName) else {
            throw ModelContainer.unregisteredModelError("\(T.self)")
        }
        let follower = try LogFollowers.retain(for: container.store)
        self.follower = follower
        self.state = State(descriptor: descriptor)
        self.sharing = sharing
        let owner = self.owner
        owner.query = self
        let past = ResumeBox()
        // Every stored property is set: should this throw, the deinitializer releases the follower.
        try follower.perform { txn, sequence in
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
            let link = try Link.following(ModelRowSource(descriptor), sharing: sharing, in: txn, follower: follower)
            owner.link = link
            return link.join(owner, change: nil)
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
        let follower = self.follower
        let owner = self.owner
        follower.schedule { _, _ in
            // The last live query out stops the maintained result.
            if let link = Link.of(owner), link.leave(owner) { follower.unfollow(link) }
            return nil
        }
        let sinks = observers.withLock { observers in
            observers.finished = true
            return observers.sinks
        }
        follower.observersChanged()
        LogFollowers.release(follower)
        for (_, sink, _) in sinks { sink.finish() }
    }

    // MARK: - Contents

    /// A read of the results, as Observation tracks it.
    private func access() {
        if !tracked.load(ordering: .acquiring) {
            tracked.store(true, ordering: .releasing)
            follower.observersChanged()
        }
        registrar.access(self, keyPath: resultsKeyPath)
    }

    /// The current results: an immutable snapshot, which costs nothing to take.
    public var results: LiveResults<T> {
        access()
        return follower.publication.withShared {
            LiveResults<T>(snapshot, sequence: follower.publishedSequenceHoldingLock)
        }
    }

    /// The sequence number of the commit the results reflect.
    public var sequence: UInt64 {
        access()
        return follower.publishedSequence
    }

    /// The descriptor the results follow; change it with ``setDescriptor(_:)``.
    public var descriptor: FetchDescriptor<T> {
        access()
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
        access()
        return follower.publication.withShared { state.error }
    }

    /// Follows another descriptor (a new search text, another sort): the results become the new
    /// descriptor's, with one change from the old results to the new ones delivered to the
    /// observers (none when they are the same).
    ///
    /// - Throws: the errors of a fetch; the query then keeps its previous descriptor.
    public func setDescriptor(_ descriptor: FetchDescriptor<T>) throws {
        let owner = self.owner
        try follower.perform { [self] txn, sequence in
            // The results as of the follower's last commit (this job runs before that commit's
            // results are published, and its change is delivered before this one).
            let maintained = Link.of(owner)?.query.results()
            let previous = maintained.map { ($0.keys, $0.map(ModelRowSource<T>.element)) } ?? publishedRows
            // The new descriptor's result, shared or loaded, before the query lets go of its own.
            let link = try Link.following(ModelRowSource(descriptor), sharing: sharing, in: txn, follower: follower)
            if let current = Link.of(owner), current !== link, current.leave(owner) { follower.unfollow(current) }
            owner.link = link
            let results = link.query.results()
            let change = ResultsDiff.between(
                old: previous.0, oldModels: previous.1, new: results.keys,
                newModels: results.map(ModelRowSource<T>.element), sequence: sequence)
            return link.join(owner, change: change.isEmpty ? nil : change, following: true)
        }
    }

    /// Returns once the query reflects every commit made before the call, and the changes up
    /// to it are on their way to the observers.
    public func catchUp() throws {
        try follower.perform { _, _ in nil }
    }

    /// Whether this query and `other` follow one shared result (asked on the follower's thread).
    func sharesResult(with other: LiveQuery<T>) throws -> Bool {
        let (owner, otherOwner) = (self.owner, other.owner)
        let answer = Lock(false)
        try follower.perform { _, _ in
            answer.withLock { $0 = owner.link != nil && owner.link === otherOwner.link }
            return nil
        }
        return answer.withLock { $0 }
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
            // Before the round is read: a commit's delivery that finds the links' gathered
            // observers current finds them so before this observer's round (see `LinkAudience`).
            follower.observersChanged()
            let id = observers.nextID
            observers.nextID += 1
            // A change is posted to the observers its publication found (`deliver`, which waits
            // for this lock): one added now hears of the publications after round `after`.
            let (current, sequence, after) = follower.publication.withShared {
                (snapshot, follower.publishedSequenceHoldingLock, follower.publicationRoundHoldingLock)
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
            guard let removed, let self else { return }
            follower.observersChanged()
            // The link's gathered observers let go of this one now, not at the next change.
            let owner = self.owner
            follower.schedule { _, _ in
                Link.of(owner)?.forgetAudience()
                return nil
            }
            removed.finish()
        }
    }

    // MARK: - Publishing (follower thread)

    func willPublish() {
        if tracked.load(ordering: .acquiring) { registrar.willSet(self, keyPath: resultsKeyPath) }
    }

    /// After the follower's publication lock: Observation's did-change.
    func didPublish() {
        if tracked.load(ordering: .acquiring) { registrar.didSet(self, keyPath: resultsKeyPath) }
    }

    /// Whether the query was read through what Observation tracks.
    var isTracked: Bool { tracked.load(ordering: .acquiring) }

    /// Adds the query's observers to `audience` (on the follower's thread).
    func gatherObservers(into audience: inout LinkAudience) {
        observers.withLock { observers in
            guard !observers.finished else { return }
            for (_, sink, after) in observers.sinks { audience.add(sink, after: after) }
        }
    }

    /// Under the follower's publication lock: the query shows `rows` from now on, which show
    /// `snapshot`. The results they showed before are handed back in `snapshot`, so that they are
    /// released later, after every observer has been notified. Returns the publication round.
    func publish(_ snapshot: inout RowSnapshot, to rows: PublishedRows) -> Int {
        published = rows
        swap(&rows.snapshot, &snapshot)
        return follower.publicationRoundHoldingLock
    }

    /// Under the follower's publication lock, with the results of a new descriptor.
    func publish(descriptor: FetchDescriptor<T>) {
        state.descriptor = descriptor
    }

    /// After the follower's publication lock: Observation's did-change, and `change` (of round
    /// `number`) to the observers added before that round; those on queues go into `batch`,
    /// which the caller posts.
    func deliver(_ change: PendingChange?, publication number: Int, batch: inout DeliveryBatch) {
        didPublish()
        guard let change else { return }
        // Under the lock: a sink's `post` only queues the change (or yields it to a stream),
        // and takes no lock of the query's.
        observers.withLock { observers in
            for (_, sink, after) in observers.sinks where after < number { sink.post(change, batch: &batch) }
        }
    }

    /// A record the query cannot read (decode, or test with its predicate) suspends it: the
    /// error says why, the observers stay, and the follower tries it again after each commit to
    /// the entity, until the store reads (see `recovered`).
    func suspend(with error: RillError) {
        registrar.willSet(self, keyPath: resultsKeyPath)
        follower.publication.withExclusive { state.error = error }
        registrar.didSet(self, keyPath: resultsKeyPath)
    }

    /// Under the follower's publication lock: the query follows again.
    func publishRecovery() {
        state.error = nil
    }

    /// The results published last, as keys and models (on the follower's thread).
    var publishedRows: (keys: [[UInt8]], models: [T]) {
        follower.publication.withShared { (snapshot.keys, snapshot.map(ModelRowSource<T>.element)) }
    }

    func stop(with error: RillError) {
        follower.publication.withExclusive { state.error = error }
        let sinks = observers.withLock { observers in
            observers.finished = true
            return observers.sinks
        }
        follower.observersChanged()
        for (_, sink, _) in sinks { sink.finish() }
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
