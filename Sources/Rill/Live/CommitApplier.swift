import Dispatch
import Foundation
import RillLocks
import Synchronization

/// Applies the affected queries of one commit on two threads: the follower's and a helper's.
///
/// Each query applies a commit to its own rows, so the queries of one commit are independent
/// of each other. When a commit reaches many of them and the machine has more than one core,
/// the follower hands the commit's queries to a helper thread as well; both take the next query
/// from a shared counter until none is left, and the follower waits for the helper before
/// anything is published. Only queries that never read the store while applying go to the
/// helper (the follower's read transaction belongs to its thread); the others are applied by the
/// follower. What the queries share is safe to touch from both threads: a `DecodedChange`
/// decodes under its lock, and the `HolderIndex` is changed under its own.
///
/// Waking a sleeping thread takes tens of microseconds on a virtual machine, as long as applying
/// several queries. So the follower wakes the helper as soon as it knows a commit will need it —
/// while it is still finding the commit's queries (``prepare()``) — and the helper, once awake,
/// waits for the round by watching a counter rather than sleeping. It sleeps again after the
/// round, or after ``idleNanoseconds`` without one.
final class CommitApplier: @unchecked Sendable {
    // Sendable: each outcome of a round is written by the thread that took its query and read by
    // the follower once the helper finished (or never came); `helperStarted` is the follower's
    // alone; the rest is atomic or locked.

    /// One query's work in a commit.
    struct Work {
        var id: Int32
        var query: any FollowedQuery
        var changes: [DecodedChange]
    }

    typealias Outcome = Result<LivePublication?, any Error>

    /// Fewer queries than this are applied by the follower alone: handing over costs more.
    static let parallelThreshold = 8

    /// How long the helper, woken ahead of a round, watches for it before it sleeps.
    static let idleNanoseconds: UInt64 = 500_000

    /// How long the follower waits for the helper awake to finish before it sleeps.
    static let spinNanoseconds: UInt64 = 100_000

    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private var helperStarted = false
    private let useHelper = ProcessInfo.processInfo.activeProcessorCount > 1

    /// The helper's state: `asleep`, `awake` or `stopping`.
    private let helperState = Atomic<Int>(Helper.asleep)
    /// Bumped each time a round is posted.
    private let posted = Atomic<Int>(0)
    /// The round posted last, while it runs.
    private let round = Lock<Round?>(nil)

    private enum Helper {
        static let asleep = 0
        static let awake = 1
        static let stopping = 2
    }

    /// The work both threads share, while a round runs.
    private final class Round: @unchecked Sendable {
        let work: [Work]
        let commit: CommitContext
        let next = Atomic<Int>(0)
        /// Set by the first thread to claim the helper's part: the helper, or the follower when
        /// the helper came too late (it then has nothing to wait for).
        let claimed = Atomic<Bool>(false)
        /// Set by the helper when it has drained the round.
        let finished = Atomic<Bool>(false)
        let outcomes: UnsafeMutableBufferPointer<Outcome?>

        init(work: [Work], commit: CommitContext) {
            self.work = work
            self.commit = commit
            outcomes = .allocate(capacity: work.count)
            outcomes.initialize(repeating: nil)
        }

        deinit {
            outcomes.deinitialize()
            outcomes.deallocate()
        }

        /// Applies the next query not yet taken, until none is left.
        ///
        /// The helper works on changes of its own, decoded apart from the follower's, so that
        /// the two threads share no decoded value (nor the cache lines its reference counts live on).
        func drain(helper: Bool) {
            var copies: [ObjectIdentifier: DecodedChange] = [:]
            while true {
                let index = next.add(1, ordering: .relaxed).oldValue
                guard index < work.count else { return }
                let item = work[index]
                var changes = item.changes
                if helper {
                    changes = changes.map { change in
                        if let copy = copies[ObjectIdentifier(change)] { return copy }
                        let copy = change.fresh()
                        copies[ObjectIdentifier(change)] = copy
                        return copy
                    }
                }
                outcomes[index] = Result { try item.query.apply(changes, commit: commit) }
            }
        }
    }

    /// How many commits were applied on both threads so far.
    var parallelRounds: Int { parallelRoundCount.load(ordering: .relaxed) }
    private let parallelRoundCount = Atomic<Int>(0)

    init() {}

    /// Tells the applier that the commit being routed will reach at least `parallelThreshold`
    /// queries: the helper is woken now, so that it is awake when the round comes.
    func prepare() {
        guard useHelper else { return }
        startHelperIfNeeded()
        wakeHelper()
    }

    /// Applies each query's changes of the commit: the outcome for each query's number.
    func apply(_ work: [Work], commit: CommitContext) -> [(id: Int32, outcome: Outcome)] {
        func alone(_ item: Work) -> (id: Int32, outcome: Outcome) {
            (item.id, Result { try item.query.apply(item.changes, commit: commit) })
        }
        guard useHelper, work.count >= Self.parallelThreshold else { return work.map(alone) }
        let shared = work.filter { $0.query.appliesWithoutReading }
        guard shared.count >= Self.parallelThreshold else { return work.map(alone) }
        let own = work.filter { !$0.query.appliesWithoutReading }
        let round = Round(work: shared, commit: commit)
        self.round.withLock { $0 = round }
        startHelperIfNeeded()
        posted.add(1, ordering: .releasing)
        wakeHelper()
        var outcomes = own.map(alone)
        round.drain(helper: false)
        if round.claimed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged {
            // The helper never came: every query was applied here.
        } else {
            // The helper is usually about done by now: wait for it awake, briefly, before sleeping.
            let spinStart = DispatchTime.now().uptimeNanoseconds
            while !round.finished.load(ordering: .acquiring),
                DispatchTime.now().uptimeNanoseconds - spinStart < Self.spinNanoseconds
            {}
            done.wait()
            parallelRoundCount.add(1, ordering: .relaxed)
        }
        self.round.withLock { $0 = nil }
        for (index, item) in shared.enumerated() {
            outcomes.append((item.id, round.outcomes[index]!))
        }
        return outcomes
    }

    /// Ends the helper thread, if one was started; called by the follower as it stops.
    func stop() {
        guard helperStarted else { return }
        helperState.store(Helper.stopping, ordering: .sequentiallyConsistent)
        wake.signal()
        done.wait()
    }

    private func wakeHelper() {
        if helperState.compareExchange(
            expected: Helper.asleep, desired: Helper.awake, ordering: .sequentiallyConsistent
        ).exchanged {
            wake.signal()
        }
    }

    private func startHelperIfNeeded() {
        guard !helperStarted else { return }
        helperStarted = true
        let thread = Thread { [self] in runHelper() }
        thread.name = "rill.follower.helper"
        thread.start()
    }

    private func runHelper() {
        var seen = 0
        while true {
            wake.wait()
            // Awake: watch for rounds until none came for a while.
            var idleSince = DispatchTime.now().uptimeNanoseconds
            while true {
                if helperState.load(ordering: .sequentiallyConsistent) == Helper.stopping {
                    done.signal()
                    return
                }
                let current = posted.load(ordering: .acquiring)
                if current != seen {
                    seen = current
                    if let round = round.withLock({ $0 }),
                        round.claimed.compareExchange(
                            expected: false, desired: true, ordering: .acquiringAndReleasing
                        ).exchanged
                    {
                        round.drain(helper: true)
                        round.finished.store(true, ordering: .releasing)
                        done.signal()
                    }
                    // Back to sleep at once: the follower wakes the helper again, ahead of
                    // time, for the next commit that needs it; spinning on would take a core
                    // from the observers being called meanwhile.
                } else if DispatchTime.now().uptimeNanoseconds - idleSince < Self.idleNanoseconds {
                    continue
                }
                // Announce the sleep, then look once more: a round posted since is either seen
                // here, or its poster found the helper asleep and signals `wake`.
                guard
                    helperState.compareExchange(
                        expected: Helper.awake, desired: Helper.asleep, ordering: .sequentiallyConsistent
                    ).exchanged
                else { continue }  // stopping
                if posted.load(ordering: .sequentiallyConsistent) != seen,
                    helperState.compareExchange(
                        expected: Helper.asleep, desired: Helper.awake, ordering: .sequentiallyConsistent
                    ).exchanged
                {
                    idleSince = DispatchTime.now().uptimeNanoseconds
                    continue
                }
                break
            }
        }
    }
}
