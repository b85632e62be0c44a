import Foundation
import RillLocks
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Follows one store's log for every live query of it in this process.
///
/// A dedicated thread waits for a commit on its watch of the log (``LogWatch``: a save of this
/// process wakes it at once, another process's commit through inotify on the store file, and a
/// poll every second bounds the wait if neither arrives) — then reads the commits after the last one it applied
/// (up to `batchSize` per read transaction), and applies them one by one, each changed record to
/// the queries that hold it or that it could enter. The transaction ends before anything is
/// published. For each commit, the new results of all affected queries become visible together
/// under one lock (once a read shows one query at a commit, every later read of any query does),
/// then their changes go to the observers, in commit order.
///
/// There is one follower per store file per process, whatever the number of containers.
final class LogFollower: @unchecked Sendable {
    // Sendable: `shared` and `threadID` are behind locks, `publishedSequenceStorage` behind
    // `publication`; the queries, holder indexes and `applied` are touched only on the follower
    // thread (by `run` and the jobs it runs).
    let store: Store
    let fileID: StoreFileID

    /// Guards every published result of this follower's queries, and `publishedSequence`.
    let publication = ReadWriteLock()
    private var publishedSequenceStorage: UInt64 = 0

    /// The sequence number of the last commit whose results are published.
    var publishedSequence: UInt64 { publication.withShared { publishedSequenceStorage } }

    /// `publishedSequence`, for a caller that holds `publication` already.
    var publishedSequenceHoldingLock: UInt64 { publishedSequenceStorage }

    /// How many times results were published (under `publication`): a live query's observer
    /// added after a round is not told of that round's change.
    private var publicationRounds = 0

    /// The number of the last round of publications, for a caller that holds `publication`.
    var publicationRoundHoldingLock: Int { publicationRounds }

    /// Advanced whenever a live query's observers change (one added, cancelled or finished, the
    /// query released, or first read through what Observation tracks): the links' gathered
    /// observers (`LinkAudience`) are current while it stays.
    private let observerGenerationStorage = Atomic(0)

    var observerGeneration: Int { observerGenerationStorage.load(ordering: .acquiring) }

    /// A live query's observers changed. A query adding an observer calls this before it reads
    /// the publication round the observer starts after.
    func observersChanged() { observerGenerationStorage.wrappingAdd(1, ordering: .acquiringAndReleasing) }

    /// Handed from the asking thread to the follower thread, which alone runs it.
    private struct Job: @unchecked Sendable {
        /// Runs on the follower thread, in its read transaction, after it caught up.
        var run: (StoreSnapshot, UInt64) throws -> LivePublication?
        var completion: JobCompletion?
    }

    private struct Shared {
        var jobs: [Job] = []
        var stopping = false
    }

    private let shared = Lock(Shared())
    /// The follower thread, once it runs (to refuse waiting for it on itself).
    private let threadID = Lock<pthread_t?>(nil)
    /// Wakes the thread: the log's commits, and the jobs it is given.
    private let watch: LogWatch

    // Owned by the follower thread.
    private var queries: [Int32: any FollowedQuery] = [:]
    /// Queries kept to follow again (`FollowedQuery.canRecover`).
    private var suspended = SuspendedQueries()
    private var queriesByEntity: [String: [(id: Int32, query: any FollowedQuery)]] = [:]
    /// The queries whose predicates look through relationships, by the related entity.
    private var relatedQueries: [String: [(id: Int32, dependency: RelatedDependency, entity: String)]] = [:]
    /// The fields the screens of each entity's queries read.
    private var fieldTables: [String: FieldTable] = [:]
    /// Which queries hold which records, by entity.
    private var holders: [String: HolderIndex] = [:]
    private var nextID: Int32 = 0
    private var applied: UInt64 = 0
    /// Records as of `applied`, of the entities followed, that the follower has seen.
    private let images = RecordImages()
    /// Applies a commit's queries, on two threads when there are many.
    private let applier = CommitApplier()
    /// The results that live queries share (used in jobs, on the follower's thread): of text
    /// queries, and of typed ones.
    let sharedRecordQueries = SharedRecordQueries()
    let sharedModelQueries = SharedModelQueries()

    /// The last commit applied, and the number of queries followed, as the follower thread last
    /// left them: read by the daemon's metrics without waiting for the thread.
    let appliedThrough = Atomic<UInt64>(0)
    let followedCount = Atomic<Int>(0)

    /// How many commits this follower applied on two threads so far.
    var parallelRounds: Int { applier.parallelRounds }

    /// The screen tests of each entity's queries.
    private var screenTests: [String: ScreenTests] = [:]

    /// The screen tests of `entity`'s queries, made anew when they changed; counted as used
    /// for one change (see `ScreenTests.use()`).
    private func tests(of entity: String, table: FieldTable) -> ScreenTests {
        if var current = screenTests[entity], current.generation == table.generation {
            guard current.use() else { return current }
            screenTests[entity] = current
            return current
        }
        let queries = queriesByEntity[entity] ?? []
        let tests = ScreenTests(
            generation: table.generation, ids: ContiguousArray(queries.map { $0.id }),
            tests: ContiguousArray(queries.map { $0.query.screen.test }))
        screenTests[entity] = tests
        return tests
    }

    init(store: Store) throws {
        self.store = store
        self.fileID = store.fileID
        watch = try store.log.watch()
        applied = try store.head()
        publishedSequenceStorage = applied
        appliedThrough.store(applied, ordering: .relaxed)
        let thread = Thread { [self] in run() }
        thread.name = "rill.follower"
        thread.start()
    }

    // MARK: - Requests

    /// Wakes the follower to read the log and run its jobs.
    func poke() { watch.wake() }

    /// Starts following `query`: it is loaded as of the last commit, then published.
    func add(
        _ query: any FollowedQuery, load: @escaping (StoreSnapshot, UInt64) throws -> LivePublication?
    ) throws {
        try perform { [self] txn, sequence in
            let publication = try load(txn, sequence)
            follow(query)
            return publication
        }
    }

    /// Starts following `query`, loaded as of the last commit applied; on the follower's thread
    /// only (in a job).
    func follow(_ query: any FollowedQuery) {
        let id = nextID
        nextID += 1
        follow(query, as: id)
    }

    /// Enters `query` in the tables that route commits to it, as `id`.
    private func follow(_ query: any FollowedQuery, as id: Int32) {
        let index = holders[query.entityName] ?? HolderIndex()
        holders[query.entityName] = index
        query.attach(to: index, id: id)
        let table = fieldTables[query.entityName] ?? FieldTable()
        fieldTables[query.entityName] = table
        query.screen.bind(to: table)
        queries[id] = query
        followedCount.store(queries.count, ordering: .relaxed)
        queriesByEntity[query.entityName, default: []].append((id, query))
        for dependency in query.relatedDependencies {
            relatedQueries[dependency.relatedEntity, default: []].append((id, dependency, query.entityName))
        }
    }

    /// Stops following `query`; returns at once.
    func remove(_ query: any FollowedQuery) {
        let object = ObjectIdentifier(query)
        enqueue(
            Job(
                run: { [self] _, _ in
                    unfollow(object)
                    return nil
                }, completion: nil))
    }

    /// Stops following `query` at once; on the follower's thread only (in a job).
    func unfollow(_ query: any FollowedQuery) {
        unfollow(ObjectIdentifier(query))
    }

    private func unfollow(_ object: ObjectIdentifier) {
        if let id = queries.first(where: { ObjectIdentifier($0.value) == object })?.key { forget(id) }
        suspended.remove(object)
    }

    private func forget(_ id: Int32) {
        guard let query = queries.removeValue(forKey: id) else { return }
        followedCount.store(queries.count, ordering: .relaxed)
        query.detach()
        queriesByEntity[query.entityName]?.removeAll { $0.id == id }
        fieldTables[query.entityName]?.generation += 1
        for dependency in query.relatedDependencies {
            relatedQueries[dependency.relatedEntity]?.removeAll { $0.id == id }
            if relatedQueries[dependency.relatedEntity]?.isEmpty == true {
                relatedQueries[dependency.relatedEntity] = nil
            }
        }
    }

    /// Runs `body` on the follower thread once it has applied every commit up to the last one,
    /// inside its read transaction (given with the sequence applied), publishes what it returns
    /// and waits for all that.
    func perform(_ body: @escaping (StoreSnapshot, UInt64) throws -> LivePublication?) throws {
        if let thread = threadID.withLock({ $0 }), pthread_equal(thread, pthread_self()) != 0 {
            throw RillError(
                .misuse,
                "a live query cannot be created, changed or waited for on its follower thread "
                    + "(from an observation handler, which runs there); do it from another thread or queue")
        }
        let completion = JobCompletion()
        enqueue(Job(run: body, completion: completion))
        try completion.wait()
    }

    /// Runs `body` on the follower thread once it has applied every commit up to the last one,
    /// as ``perform(_:)`` does, and publishes what it returns, after the changes of every commit
    /// up to the one it is given; returns at once, and may be called on the follower thread.
    func schedule(_ body: @escaping (StoreSnapshot, UInt64) throws -> LivePublication?) {
        enqueue(Job(run: body, completion: nil))
    }

    private func enqueue(_ job: Job) {
        shared.withLock { $0.jobs.append(job) }
        poke()
    }

    /// Finishes the follower's thread once its pending jobs ran.
    func stop() {
        shared.withLock { $0.stopping = true }
        poke()
    }

    // MARK: - The thread

    private func run() {
        threadID.withLock { $0 = pthread_self() }
        while true {
            watch.wait()
            let (jobs, stopping) = shared.withLock { state in
                defer { state.jobs = [] }
                return (state.jobs, state.stopping)
            }
            if stopping {
                // No live query is left (each released one queued its removal): drop them all at
                // once rather than one by one.
                queries.removeAll()
                queriesByEntity.removeAll()
                holders.removeAll()
                for job in jobs { job.completion?.complete(.success(())) }
                break
            }
            // Behind a long backlog, go on without waiting for another wake-up.
            if !step(jobs) { poke() }
            // Rows the queries let go of are freed from the shared copies once they add up.
            store.sharedRows.sweepIfDue()
        }
        applier.stop()
        watch.close()
    }

    /// The most commits applied in one read transaction; more are applied in further steps, so
    /// that a long backlog never holds many commits (or their results) in memory at once.
    static let batchSize = 256

    /// How long one read transaction of the follower applies commits before it ends.
    static let transactionNanoseconds: UInt64 = 20_000_000

    /// Applies the next commits (up to `batchSize`) and, once caught up, runs the jobs; then
    /// publishes and completes them. Returns false when commits remain to be applied.
    @discardableResult
    private func step(_ jobs: [Job]) -> Bool {
        var commits: [(sequence: UInt64, publications: [LivePublication])] = []
        var jobOutcomes: [Result<LivePublication?, any Error>] = []
        var failures: [LivePublication] = []
        var recovered: [LivePublication] = []
        var caughtUp = true
        do {
            try store.read { txn in
                // Only commits on disk reach observers (see `Store.observableHead(in:)`).
                let head = try store.observableHead(in: txn)
                if head > applied, !queries.isEmpty || !suspended.isEmpty {
                    let entries = try store.log.entries(after: applied, limit: Self.batchSize, in: txn)
                    let context = CommitContext(
                        store: store, transaction: txn, entries: entries, index: 0, snapshot: head, images: images)
                    let started = DispatchTime.now().uptimeNanoseconds
                    var last = entries.last
                    for (index, entry) in entries.enumerated() {
                        context.index = index
                        commits.append((entry.sequence, apply(entry, context: context, failures: &failures)))
                        if !suspended.isEmpty { suspended.note(entry) }
                        images.apply(entry, entities: queriesByEntity.keys)
                        // A long transaction keeps LMDB from reusing the pages commits free (the
                        // file grows) and holds off a map resize: past a bound, end it here and
                        // go on in another.
                        if DispatchTime.now().uptimeNanoseconds - started > Self.transactionNanoseconds {
                            last = entry
                            break
                        }
                    }
                    if let last, last.sequence < head {
                        applied = last.sequence
                        caughtUp = false
                        return
                    }
                }
                applied = max(applied, head)
                recovered = suspended.recover(in: txn, sequence: applied) { follow($1, as: $0) }
                // Jobs (a new query's first results, a fetch at the follower's position) are bounded
                // like commits: past the bound, the rest wait for the next transaction, so that a
                // crowd of them never holds one snapshot open for long.
                let jobsStarted = jobs.isEmpty ? 0 : DispatchTime.now().uptimeNanoseconds
                for job in jobs {
                    if !jobOutcomes.isEmpty,
                        DispatchTime.now().uptimeNanoseconds - jobsStarted > Self.transactionNanoseconds
                    {
                        break
                    }
                    jobOutcomes.append(Result { try job.run(txn, applied) })
                }
            }
        } catch let error as RillError where error.code == .corruptStore || error.code == .unsupportedFormat {
            // The log cannot be read past this point: every query stops with the error.
            for (id, query) in queries {
                failures.append(query.fail(error))
                forget(id)
            }
            jobOutcomes = jobs.map { _ in .failure(error) }
        } catch let error as RillError where error.code == .historyCompacted {
            // Unread commits were compacted away (`rill compact`, another process): what they
            // changed is unknown. A query that can load again does so at the head in the next
            // step, its observers told the difference; the others stop with the error. The
            // follower goes on from the head with the jobs.
            for (id, query) in queries {
                if query.canRecover(from: error) {
                    suspended.suspend(query, as: id, changed: nil)
                } else {
                    failures.append(query.fail(error))
                }
                forget(id)
            }
            suspended.forgetChanges()
            images.removeAll()
            if let head = try? store.read({ try store.observableHead(in: $0) }) { applied = max(applied, head) }
            shared.withLock { $0.jobs.insert(contentsOf: jobs, at: 0) }
            publish(failures, sequence: nil)
            appliedThrough.store(applied, ordering: .relaxed)
            return false
        } catch {
            // A storage failure: the jobs fail with it; the commits are read again at the next wake-up.
            jobOutcomes = jobs.map { _ in .failure(error) }
        }
        for commit in commits {
            publish(commit.publications, sequence: commit.sequence)
        }
        publish(failures, sequence: nil)
        publish(recovered, sequence: nil)
        appliedThrough.store(applied, ordering: .relaxed)
        guard caughtUp else {
            // The jobs wait for the rest of the backlog.
            shared.withLock { $0.jobs.insert(contentsOf: jobs, at: 0) }
            return false
        }
        for (job, outcome) in zip(jobs, jobOutcomes) {
            if case .success(let publication?) = outcome { publish([publication], sequence: applied) }
            job.completion?.complete(outcome.map { _ in () })
        }
        if commits.isEmpty, jobs.isEmpty == false, publishedSequence < applied {
            publication.withExclusive { publishedSequenceStorage = applied }
        }
        if jobOutcomes.count < jobs.count {
            // The jobs past the bound go first in the next step, in their order.
            shared.withLock { $0.jobs.insert(contentsOf: jobs[jobOutcomes.count...], at: 0) }
            return false
        }
        return true
    }

    private func publish(_ publications: [LivePublication], sequence: UInt64?) {
        for publication in publications { publication.willPublish() }
        publication.withExclusive {
            publicationRounds += 1
            for publication in publications { publication.publish() }
            if let sequence { publishedSequenceStorage = max(publishedSequenceStorage, sequence) }
        }
        for publication in publications { publication.deliver() }
    }

    /// Applies one commit to the queries it may affect: for each changed record, the queries
    /// that hold it, and, for an insert or update, those whose screen admits it.
    private func apply(
        _ entry: LogEntry, context: CommitContext, failures: inout [LivePublication]
    ) -> [LivePublication] {
        var changesByQuery: [Int32: [DecodedChange]] = [:]
        var failed: [(Int32, any Error)] = []
        // A commit may change one record twice (a save given as JSON, say: an insert, then a
        // delete). The holder index is as it was before the commit, so the later change also
        // goes to every query an earlier change of the record went to.
        var routed: [String: [[UInt8]: [Int32]]] = [:]
        // Once the commit is known to reach enough queries that the helper may apply (those
        // that apply without reading the store), the helper is woken, while the rest are found.
        // Only those count: woken for a commit it gets no part of, the helper would watch for a
        // round that never comes, taking a core from the threads that have work.
        var reached = 0
        var prepared = false
        func reach(_ id: Int32) {
            guard !prepared, queries[id]?.appliesWithoutReading == true else { return }
            reached += 1
            if reached >= CommitApplier.parallelThreshold {
                prepared = true
                applier.prepare()
            }
        }
        for change in entry.changes {
            guard let candidates = queriesByEntity[change.entity], !candidates.isEmpty,
                let index = holders[change.entity]
            else { continue }
            let table = fieldTables[change.entity] ?? FieldTable()
            let decoded = DecodedChange(change, fields: table, sharedRows: store.sharedRows)
            var targets = index.holders(of: change.key)
            for id in targets { reach(id) }
            if let earlier = routed[change.entity]?[change.key] {
                for id in earlier where !targets.contains(id) { targets.append(id) }
            }
            if change.kind != .delete {
                // The queries that hold the record have it already; the tests run by ascending
                // query number, so a walk through the sorted holders skips them.
                let held = targets.sorted()
                var next = 0
                let screens = tests(of: change.entity, table: table)
                screens.tests.withUnsafeBufferPointer { tests in
                    guard let base = tests.baseAddress else { return }
                    screens.forEachCandidate(of: decoded) { index in
                        let id = screens.ids[index]
                        while next < held.count, held[next] < id { next += 1 }
                        if next < held.count, held[next] == id { return }
                        do {
                            // Through the pointer, the test is run in place, not copied; the
                            // change is this thread's alone until the commit's queries apply.
                            if try ScreenTest.admits(base + index, decoded, unshared: true) {
                                targets.append(id)
                                reach(id)
                            }
                        } catch {
                            failed.append((id, error))
                        }
                    }
                }
            }
            for id in targets { changesByQuery[id, default: []].append(decoded) }
            if entry.changes.count > 1, !targets.isEmpty { routed[change.entity, default: [:]][change.key] = targets }
        }
        if !relatedQueries.isEmpty {
            routeRelated(entry, context: context, into: &changesByQuery, failed: &failed)
        }
        var work: [CommitApplier.Work] = []
        work.reserveCapacity(changesByQuery.count)
        for (id, changes) in changesByQuery {
            guard let query = queries[id], !failed.contains(where: { $0.0 == id }) else { continue }
            work.append(CommitApplier.Work(id: id, query: query, changes: changes))
        }
        var publications: [LivePublication] = []
        for (id, outcome) in applier.apply(work, commit: context) {
            switch outcome {
            case .success(let publication?): publications.append(publication)
            case .success(nil): break
            case .failure(let error): failed.append((id, error))
            }
        }
        for (id, error) in failed {
            guard let query = queries[id] else { continue }
            failures.append(query.fail(error))
            forget(id)
            if query.canRecover(from: error) { suspended.suspend(query, as: id, changed: []) }
        }
        return publications
    }

    /// Hands each query whose predicate looks through a relationship the records of its entity
    /// that `entry`'s changes of the related entity concern: each as a change that leaves the
    /// record as it is (`DecodedChange.isRelated`), which the query tests again, as of the commit.
    ///
    /// The cost is that of the records concerned: the references a changed record holds before
    /// and after, or the entries of the reference index naming it.
    private func routeRelated(
        _ entry: LogEntry, context: CommitContext, into changesByQuery: inout [Int32: [DecodedChange]],
        failed: inout [(Int32, any Error)]
    ) {
        var loader: RelationshipLoader?
        var sent: Set<[UInt8]> = []
        // The records a change concerns are found once for each dependency, whatever the number of
        // queries that share it; each query then screens them as it screens any change.
        var decoded: [String: [[UInt8]: DecodedChange?]] = [:]
        for change in entry.changes {
            guard let dependents = relatedQueries[change.entity] else { continue }
            let reader = loader ?? RelationshipLoader(store: store, snapshot: context.transaction, commit: context)
            loader = reader
            var concerned: [RelatedDependency: Result<[[UInt8]], any Error>] = [:]
            for (id, dependency, entity) in dependents {
                guard let query = queries[id] else { continue }
                let keys: [[UInt8]]
                do {
                    if let known = concerned[dependency] {
                        keys = try known.get()
                    } else {
                        let result = Result {
                            try Self.concernedKeys(of: change, by: dependency, entity: entity, reader)
                        }
                        concerned[dependency] = result
                        keys = try result.get()
                    }
                    for key in keys {
                        let marker = withUnsafeBytes(of: id) { Array($0) } + key
                        guard !sent.contains(marker) else { continue }
                        let unchanged: DecodedChange?
                        if let known = decoded[entity]?[key] {
                            unchanged = known
                        } else {
                            unchanged = try relatedChange(of: entity, key: key, reader: reader)
                            decoded[entity, default: [:]][key] = .some(unchanged)
                        }
                        guard let unchanged, try query.screen.conditionsHold(for: unchanged) else { continue }
                        sent.insert(marker)
                        changesByQuery[id, default: []].append(unchanged)
                    }
                } catch {
                    failed.append((id, error))
                }
            }
        }
    }

    /// The records of `entity` that `change` (of the related entity) concerns through `dependency`.
    private static func concernedKeys(
        of change: LogEntry.Change, by dependency: RelatedDependency, entity: String, _ reader: RelationshipLoader
    ) throws -> [[UInt8]] {
        switch dependency {
        case .referencedBy(_, let field):
            var keys: [[UInt8]] = []
            for record in [change.before, change.record].compactMap({ $0 }) {
                for key in try reader.referencedKeys(in: record, of: change.entity, field: field)
                where !keys.contains(key) {
                    keys.append(key)
                }
            }
            return keys
        case .references(_, let field):
            return try reader.referrerKeys(of: change.entity, key: change.key, source: entity, field: field)
        }
    }

    /// A change of `entity`'s record `key` that leaves it as it is at the commit; nil when it
    /// does not exist then.
    private func relatedChange(of entity: String, key: [UInt8], reader: RelationshipLoader) throws -> DecodedChange? {
        guard let storage = try store.entity(named: entity), let record = try reader.record(of: storage, key: key)
        else {
            return nil
        }
        let unchanged = LogEntry.Change(
            kind: .update, entity: entity, key: key, changedFields: [], record: record, before: record)
        return DecodedChange(
            unchanged, fields: fieldTables[entity] ?? FieldTable(), isRelated: true, sharedRows: store.sharedRows)
    }
}
