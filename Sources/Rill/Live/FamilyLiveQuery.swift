import Dispatch
import Foundation
import RillLocks

/// The results of a deep fetch of a family (``FamilyDescriptor``), kept current: every kind's
/// models, each as the kind its record names, with one ``ResultsChange`` after each commit that
/// changes them — as ``LiveQuery`` does for one model type.
///
/// For example:
///
/// ```swift
/// let recipes = try FamilyLiveQuery(
///     FamilyDescriptor<any Recipe>(predicate: #Predicate { $0 is BakedGood || $0.name == "Tea" }),
///     in: container)
/// let observation = recipes.observe(on: .main) { change in
///     for insertion in change.insertions { print("+", insertion.element.name) }
/// }
/// ```
///
/// A commit costs it work in proportion to the records it changed, as for a typed live query. A
/// stored record it cannot read — one that names no kind of the family, or does not decode as
/// the kind it names — suspends it (``error`` says why) until that record is saved again or
/// deleted; its observers stay.
public final class FamilyLiveQuery<Base: Sendable>: @unchecked Sendable {
    // Sendable: `snapshot` and `error` are guarded by `follower.publication`, `observers` by its lock.

    private let follower: LogFollower
    private let link: Link
    private var snapshot = RowSnapshot.empty
    private var failure: RillError?
    private let observers = Lock(Observers())

    private struct Observers {
        var nextID = 0
        var handlers: [(id: Int, post: @Sendable (ResultsChange<Base>) -> Void, finish: @Sendable () -> Void)] = []
        var finished = false
    }

    /// Fetches `descriptor`'s results as of the store's last commit and keeps them current.
    ///
    /// - Throws: ``RillError`` with `.unknownEntity` when no model type of the container is a
    ///   kind of a family of `Base`, or the errors of a fetch.
    public init(_ descriptor: FamilyDescriptor<Base>, in container: ModelContainer) throws {
        let family = try container.family(of: Base.self)
        let follower = try LogFollowers.retain(for: container.store)
        self.follower = follower
        link = Link(query: MaintainedQuery(FamilyRowSource(descriptor, family: family)))
        link.owner = self
        let link = self.link
        try follower.add(link) { txn, _ in
            try link.query.load(in: txn, store: follower.store)
            return link.publication(change: nil)
        }
    }

    deinit {
        follower.remove(link)
        LogFollowers.release(follower)
        let handlers = observers.withLock { observers in
            observers.finished = true
            return observers.handlers
        }
        for handler in handlers { handler.finish() }
    }

    // MARK: - Contents

    /// The current results, in the descriptor's order.
    public var results: [Base] {
        follower.publication.withShared { snapshot.map(FamilyRowSource<Base>.element) }
    }

    /// The sequence number of the commit the results reflect.
    public var sequence: UInt64 { follower.publishedSequence }

    /// Why the query is not following the store, or nil while it follows (see ``LiveQuery/error``).
    public var error: RillError? { follower.publication.withShared { failure } }

    /// Returns once the query reflects every commit made before the call, and the changes up to
    /// it are on their way to the observers.
    public func catchUp() throws {
        try follower.perform { _, _ in nil }
    }

    // MARK: - Observing

    /// Calls `handler` on `queue` with each change, in commit order, until the returned
    /// observation is cancelled or released.
    public func observe(
        on queue: DispatchQueue, _ handler: @escaping @Sendable (ResultsChange<Base>) -> Void
    ) -> LiveObservation {
        let flag = CancellationFlag()
        let delivery = DeliveryQueue.of(queue)
        return add(
            post: { change in delivery.post { if !flag.isCancelled { handler(change) } } }, finish: {}, flag: flag)
    }

    /// The changes as an asynchronous sequence, from now on, in commit order. It ends when the
    /// task iterating it is cancelled, the query stops with an ``error``, or it is released.
    public var changes: AsyncStream<ResultsChange<Base>> {
        let (stream, continuation) = AsyncStream<ResultsChange<Base>>.makeStream()
        let observation = add(
            post: { continuation.yield($0) }, finish: { continuation.finish() }, flag: CancellationFlag())
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }

    private func add(
        post: @escaping @Sendable (ResultsChange<Base>) -> Void, finish: @escaping @Sendable () -> Void,
        flag: CancellationFlag
    ) -> LiveObservation {
        let id: Int? = observers.withLock { observers in
            guard !observers.finished else { return nil }
            let id = observers.nextID
            observers.nextID += 1
            observers.handlers.append((id, post, finish))
            return id
        }
        guard let id else {
            finish()
            flag.cancel()
            return LiveObservation {}
        }
        return LiveObservation { [weak self] in
            flag.cancel()
            let removed = self?.observers.withLock { observers in
                observers.handlers.firstIndex { $0.id == id }.map { observers.handlers.remove(at: $0) }
            }
            removed?.finish()
        }
    }

    // MARK: - Publishing (follower thread)

    private func publish(_ snapshot: inout RowSnapshot, recovered: Bool) {
        swap(&self.snapshot, &snapshot)
        if recovered { failure = nil }
    }

    private func deliver(_ change: ResultsChange<Base>?) {
        guard let change else { return }
        let handlers = observers.withLock { $0.handlers }
        for handler in handlers { handler.post(change) }
    }

    private func suspend(with error: RillError) {
        follower.publication.withExclusive { failure = error }
    }

    private func stop(with error: RillError) {
        follower.publication.withExclusive { failure = error }
        let handlers = observers.withLock { observers in
            observers.finished = true
            return observers.handlers
        }
        for handler in handlers { handler.finish() }
    }

    private var publishedRows: (keys: [[UInt8]], models: [Base]) {
        follower.publication.withShared { (snapshot.keys, snapshot.map(FamilyRowSource<Base>.element)) }
    }

    /// The follower's handle on the query.
    private final class Link: MaintainedLink {
        let query: MaintainedQuery<FamilyRowSource<Base>>
        weak var owner: FamilyLiveQuery<Base>?

        init(query: MaintainedQuery<FamilyRowSource<Base>>) { self.query = query }

        func apply(_ changes: [DecodedChange], commit: CommitContext) throws -> LivePublication? {
            guard let change = try query.apply(changes, commit: commit) else { return nil }
            return Publication(
                owner: owner, snapshot: query.results(), change: change.results(FamilyRowSource<Base>.element))
        }

        func publication(change: ResultsChange<Base>?) -> LivePublication {
            Publication(owner: owner, snapshot: query.results(), change: change)
        }

        func fail(_ error: any Error) -> LivePublication {
            let failure = Self.failure(error)
            if canRecover(from: error) {
                return ClosurePublication(deliver: { [weak owner] in owner?.suspend(with: failure) })
            }
            return ClosurePublication(deliver: { [weak owner] in owner?.stop(with: failure) })
        }

        func canRecover(from error: any Error) -> Bool {
            guard let error = error as? RillError else { return false }
            return error.code == .decodingFailed || error.code == .queryFailed || error.code == .historyCompacted
        }

        func recover(in txn: StoreSnapshot, sequence: UInt64, changed: Set<[UInt8]>?) throws -> LivePublication? {
            guard let owner else { return nil }
            let previous = owner.publishedRows
            try query.load(in: txn, store: owner.follower.store)
            let results = query.results()
            let change = ResultsDiff.reloaded(
                old: previous.keys, oldModels: previous.models, new: results.keys,
                newModels: results.map(FamilyRowSource<Base>.element), changed: changed, sequence: sequence)
            return Publication(
                owner: owner, snapshot: results, change: change.isEmpty ? nil : change, recovers: true)
        }
    }

    /// New results and their change, on their way to the query.
    private final class Publication: LivePublication {
        weak var owner: FamilyLiveQuery<Base>?
        var snapshot: RowSnapshot
        let change: ResultsChange<Base>?
        let recovers: Bool

        init(owner: FamilyLiveQuery<Base>?, snapshot: RowSnapshot, change: ResultsChange<Base>?, recovers: Bool = false)
        {
            self.owner = owner
            self.snapshot = snapshot
            self.change = change
            self.recovers = recovers
        }

        override func publish() { owner?.publish(&snapshot, recovered: recovers) }
        override func deliver() { owner?.deliver(change) }
    }
}
