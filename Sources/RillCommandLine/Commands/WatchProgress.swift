import Dispatch
import Foundation
import Rill
import RillLocks
import RillService

/// The progress lines of `rill watch --json` on a store (Documentation/Protocol.md, "Progress"):
/// `{"seq":N}` when commits went by without changing the results and nothing was printed for an
/// interval, so that a consumer that stops resumes after them with `--since`.
///
/// The live query's handler tells it of each line printed, on the follower thread; a thread of
/// its own looks, an interval after the last line, whether the store moved on, and asks the live
/// query for a report, which comes to the handler after every change up to its commit.
final class WatchProgress: Sendable {
    private let schedule: Lock<ProgressSchedule>

    /// Progress every `interval` seconds (nil or 0: never), after the lines up to `sequence`.
    init(interval: Double?, sequence: UInt64) {
        schedule = Lock(ProgressSchedule(interval: interval, sequence: sequence, now: Self.now()))
    }

    /// The results as of `sequence` were printed.
    func printed(resultsAt sequence: UInt64) {
        schedule.withLock { $0.restart(at: sequence, now: Self.now()) }
    }

    /// The change of commit `sequence` was printed.
    func printed(changeAt sequence: UInt64) {
        _ = schedule.withLock { $0.send(sequence, at: Self.now()) }
    }

    /// Whether a report of progress up to `sequence` is to be printed: when it is past every
    /// line printed; it then counts as printed.
    func admits(_ sequence: UInt64) -> Bool {
        schedule.withLock { $0.send(sequence, at: Self.now()) }
    }

    /// Looks for progress every interval on a thread of its own, for as long as the process runs,
    /// asking `live` for a report when one is due; nothing when the interval is never.
    func start(asking live: RecordLiveQuery) {
        guard schedule.withLock({ $0.deadline }) != nil else { return }
        let thread = Thread { [self] in
            while let deadline = schedule.withLock({ $0.deadline }) {
                let now = Self.now()
                if deadline > now {
                    usleep(UInt32(min((deadline - now) / 1_000, 1_000_000)))
                    continue
                }
                // Read before the lock is taken: the follower's lock is never taken inside it.
                let published = live.sequence
                if schedule.withLock({ $0.shouldAsk(published: published, now: Self.now()) }) {
                    live.reportProgress()
                }
            }
        }
        thread.name = "rill.watch.progress"
        thread.start()
    }

    private static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}
