import Dispatch
import Foundation
import RillLocks
import Synchronization

/// The one OS thread on which an environment's write transactions run.
///
/// LMDB write transactions are bound to the thread that began them, and a write transaction
/// waiting for LMDB's writer lock must not block a thread of Swift's cooperative pool. Jobs run
/// in submission order.
///
/// Handing a job to a sleeping thread and waking its caller afterwards costs two scheduler
/// wake-ups, tens of microseconds on a virtual machine: as much as a small commit. So both sides
/// spin before they sleep: the writer briefly, for the next job (back-to-back saves); one caller
/// at a time, for its result, but only while jobs are short. A job that waits for the disk (a
/// durable commit's fsync) lasts hundreds of microseconds, and a caller spinning through it
/// delays the kernel's own work for that fsync on a machine with few cores: measured with
/// `rill-bench save` on 2 cores, such a caller made durable saves about 10% slower than sleeping.
final class WriterThread: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var stopping = false
    }

    /// How long either side spins before it sleeps, in nanoseconds.
    private static let spinNanoseconds: UInt64 = 40_000
    /// A caller spins for its job's end only when the previous job took less than this; longer
    /// jobs are waiting for the disk.
    private static let shortJobNanoseconds: UInt64 = 100_000

    private let state = Lock(State())
    private let pending = Atomic<Int>(0)
    private let sleeping = Atomic<Bool>(false)
    private let threadID = Atomic<UInt>(0)
    private let spinningCallers = Atomic<Int>(0)
    /// How long the last job of `runAndWait` took, in nanoseconds.
    private let lastJobNanoseconds = Atomic<UInt64>(0)
    private let wakeUp = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Whether the caller is running on this writer thread.
    var isCurrent: Bool { threadID.load(ordering: .relaxed) == UInt(bitPattern: Int(bitPattern: pthread_self())) }

    /// Runs `job` on the writer thread and returns its result once it has run; the caller blocks.
    ///
    /// - Parameters:
    ///   - meanwhile: work for the calling thread while the job runs (for example producing what
    ///     the job consumes); it runs after the job is submitted, before waiting.
    ///   - expected: how long the caller expects to wait, in nanoseconds, when it knows better
    ///     than the last job's length (a grouped write waits for a group commit, however short
    ///     the jobs of writes that earlier groups settled were); the caller spins only when it
    ///     is short.
    func runAndWait<R>(_ job: () throws -> R, meanwhile: () -> Void = {}, expected: UInt64? = nil) throws -> R {
        precondition(!isCurrent, "a write transaction cannot be started from inside another one")
        return try withoutActuallyEscaping(job) { job in
            // The caller stays blocked until the job has run, so the closure and its result never
            // outlive this call and are never touched by two threads at once.
            let box = UncheckedBox<Result<R, any Error>?>(nil)
            let jobBox = UncheckedBox<(() throws -> R)?>(job)
            let completion = Completion()
            submit { [self] in
                let start = monotonicNanoseconds()
                box.value = Result { try jobBox.value!() }
                // Drop the closure before waking the caller: it must not outlive `withoutActuallyEscaping`.
                jobBox.value = nil
                lastJobNanoseconds.store(monotonicNanoseconds() - start, ordering: .relaxed)
                completion.finish()
            }
            meanwhile()
            let short = (expected ?? lastJobNanoseconds.load(ordering: .relaxed)) < Self.shortJobNanoseconds
            completion.wait(spinning: short, spinner: spinningCallers)
            return try box.value!.get()
        }
    }

    /// Runs `job` on the writer thread without waiting for it.
    func submit(_ job: @escaping @Sendable () -> Void) {
        let accepted = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.jobs.append(job)
            return true
        }
        precondition(accepted, "the storage environment was closed")
        pending.add(1, ordering: .sequentiallyConsistent)
        if sleeping.exchange(false, ordering: .sequentiallyConsistent) { wakeUp.signal() }
    }

    /// Lets queued jobs finish, then ends the thread and waits for it.
    func stop() {
        state.withLock { $0.stopping = true }
        pending.add(1, ordering: .sequentiallyConsistent)
        wakeUp.signal()
        // Released from one of its own jobs, the thread cannot wait for itself: it ends after the job.
        guard !isCurrent else { return }
        finished.wait()
    }

    private func run() {
        threadID.store(UInt(bitPattern: Int(bitPattern: pthread_self())), ordering: .relaxed)
        while true {
            let (jobs, stopping) = state.withLock { state in
                defer { state.jobs.removeAll(keepingCapacity: true) }
                return (state.jobs, state.stopping)
            }
            if !jobs.isEmpty {
                pending.subtract(jobs.count, ordering: .sequentiallyConsistent)
                for job in jobs { job() }
                continue
            }
            if stopping { break }
            if !Self.spin(until: { pending.load(ordering: .relaxed) > 0 }) {
                // Announce the sleep, then look once more: a submitter either sees the flag and
                // signals, or its job is already counted here.
                sleeping.store(true, ordering: .sequentiallyConsistent)
                if pending.load(ordering: .sequentiallyConsistent) == 0 { wakeUp.wait() }
                sleeping.store(false, ordering: .sequentiallyConsistent)
            }
        }
        finished.signal()
    }

    /// Spins until `condition` holds or `nanoseconds` pass; returns whether it held.
    ///
    /// After the first few microseconds each round yields the core, so that on a busy machine
    /// the thread being waited for (which may need this very core) gets to run.
    static func spin(until condition: () -> Bool, for nanoseconds: UInt64 = spinNanoseconds) -> Bool {
        let start = monotonicNanoseconds()
        var rounds = 0
        while !condition() {
            rounds += 1
            if rounds & 31 == 0 {
                let elapsed = monotonicNanoseconds() - start
                if elapsed > nanoseconds { return false }
                if elapsed > 5_000 { sched_yield() }
            }
        }
        return true
    }

}

/// The end of one job, awaited by its caller: a flag to spin on, then a semaphore to sleep on.
private final class Completion: Sendable {
    private let done = Atomic<Bool>(false)
    private let semaphore = DispatchSemaphore(value: 0)

    func finish() {
        done.store(true, ordering: .releasing)
        semaphore.signal()
    }

    /// Waits for `finish()`, first spinning when `spinning` says so. At most one caller at a time
    /// waits by spinning (`spinner` is the writer's count of spinning callers); others sleep at
    /// once, so a crowd of callers costs at most one core.
    func wait(spinning: Bool, spinner: borrowing Atomic<Int>) {
        // A spinning caller sees the end at once, where a sleeping one is woken tens of
        // microseconds later.
        if spinning, spinner.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged {
            let finished = WriterThread.spin(until: { done.load(ordering: .acquiring) }, for: 200_000)
            spinner.store(0, ordering: .releasing)
            if finished { return }
        }
        semaphore.wait()
    }
}

/// Nanoseconds of the monotonic clock.
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}
