import Dispatch
import Foundation
import Synchronization

/// Applies the affected queries of one commit on two threads: the follower's and a helper's.
///
/// Each query applies a commit to its own rows, so the queries of one commit are independent
/// of each other. When a commit reaches many of them and the machine has more than one core,
/// the follower wakes a helper thread; both take the next query from a shared counter until
/// none is left, and the follower waits for the helper before anything is published. Only
/// queries that never read the store while applying go to the helper (the follower's read
/// transaction belongs to its thread); the others are applied by the follower. What the queries
/// share is safe to touch from both threads: a `DecodedChange` decodes under its lock, and the
/// `HolderIndex` is changed under its own.
final class CommitApplier: @unchecked Sendable {
    // Sendable: `round` is written by the follower before it signals `start` and read by the
    // helper after it; each outcome is written by one thread and read by the follower after
    // `done`. The semaphores order those accesses.

    /// One query's work in a commit.
    struct Work {
        var id: Int32
        var query: any FollowedQuery
        var changes: [DecodedChange]
    }

    typealias Outcome = Result<LivePublication?, any Error>

    /// Fewer queries than this are applied by the follower alone: waking the helper costs more.
    static let parallelThreshold = 8

    /// How long the follower waits for the helper awake before it sleeps.
    static let spinNanoseconds: UInt64 = 100_000

    private let start = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private var helperStarted = false
    private var stopping = false
    private let useHelper = ProcessInfo.processInfo.activeProcessorCount > 1

    /// The work both threads share, while a round runs.
    private final class Round: @unchecked Sendable {
        let work: [Work]
        let commit: CommitContext
        /// The changes of `work`, decoded apart for the helper (nothing decoded is shared).
        let helperChanges: [[DecodedChange]]
        let next = Atomic<Int>(0)
        /// Set by the helper when it has drained the round.
        let finished = Atomic<Bool>(false)
        let outcomes: UnsafeMutableBufferPointer<Outcome?>

        init(work: [Work], commit: CommitContext) {
            self.work = work
            self.commit = commit
            var fresh: [ObjectIdentifier: DecodedChange] = [:]
            helperChanges = work.map { item in
                item.changes.map { change in
                    if let known = fresh[ObjectIdentifier(change)] { return known }
                    let copy = change.fresh()
                    fresh[ObjectIdentifier(change)] = copy
                    return copy
                }
            }
            outcomes = .allocate(capacity: work.count)
            outcomes.initialize(repeating: nil)
        }

        deinit {
            outcomes.deinitialize()
            outcomes.deallocate()
        }

        /// Applies the next query not yet taken, until none is left.
        func drain(helper: Bool) {
            while true {
                let index = next.add(1, ordering: .relaxed).oldValue
                guard index < work.count else { return }
                let item = work[index]
                let changes = helper ? helperChanges[index] : item.changes
                outcomes[index] = Result { try item.query.apply(changes, commit: commit) }
            }
        }
    }

    private var round: Round?

    /// How many commits were applied on both threads so far.
    var parallelRounds: Int { parallelRoundCount.load(ordering: .relaxed) }
    private let parallelRoundCount = Atomic<Int>(0)

    init() {}

    /// Applies each query's changes of the commit: the outcome for each query's number.
    func apply(_ work: [Work], commit: CommitContext) -> [(id: Int32, outcome: Outcome)] {
        func alone(_ item: Work) -> (id: Int32, outcome: Outcome) {
            (item.id, Result { try item.query.apply(item.changes, commit: commit) })
        }
        let shared = work.filter { $0.query.appliesWithoutReading }
        guard useHelper, shared.count >= Self.parallelThreshold else { return work.map(alone) }
        let own = work.filter { !$0.query.appliesWithoutReading }
        let round = Round(work: shared, commit: commit)
        self.round = round
        startHelperIfNeeded()
        start.signal()
        var outcomes = own.map(alone)
        round.drain(helper: false)
        // The helper is usually about done by now: wait for it awake, briefly, before sleeping.
        let spinStart = DispatchTime.now().uptimeNanoseconds
        while !round.finished.load(ordering: .acquiring),
            DispatchTime.now().uptimeNanoseconds - spinStart < Self.spinNanoseconds
        {}
        done.wait()
        self.round = nil
        parallelRoundCount.add(1, ordering: .relaxed)
        for (index, item) in shared.enumerated() {
            outcomes.append((item.id, round.outcomes[index]!))
        }
        return outcomes
    }

    /// Ends the helper thread, if one was started; called by the follower as it stops.
    func stop() {
        guard helperStarted else { return }
        stopping = true
        start.signal()
        done.wait()
    }

    private func startHelperIfNeeded() {
        guard !helperStarted else { return }
        helperStarted = true
        let thread = Thread { [self] in
            while true {
                start.wait()
                if stopping {
                    done.signal()
                    return
                }
                round?.drain(helper: true)
                round?.finished.store(true, ordering: .releasing)
                done.signal()
            }
        }
        thread.name = "rill.follower.helper"
        thread.start()
    }
}
