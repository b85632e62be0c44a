import Dispatch
import Foundation
import Synchronization

/// The one OS thread on which an environment's write transactions run.
///
/// LMDB write transactions are bound to the thread that began them, and a write transaction
/// waiting for LMDB's writer lock must not block a thread of Swift's cooperative pool. Jobs run
/// in submission order.
final class WriterThread: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var stopping = false
        var threadID: pthread_t?
    }

    private let state = Mutex(State())
    private let wakeUp = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Whether the caller is running on this writer thread.
    var isCurrent: Bool {
        state.withLock { $0.threadID.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    /// Runs `job` on the writer thread and returns its result once it has run; the caller blocks.
    func runAndWait<R>(_ job: () throws -> R) throws -> R {
        precondition(!isCurrent, "a write transaction cannot be started from inside another one")
        return try withoutActuallyEscaping(job) { job in
            // The caller stays blocked until the job has run, so the closure and its result never
            // outlive this call and are never touched by two threads at once.
            let box = UncheckedBox<Result<R, any Error>?>(nil)
            let jobBox = UncheckedBox<(() throws -> R)?>(job)
            let done = DispatchSemaphore(value: 0)
            submit {
                box.value = Result { try jobBox.value!() }
                // Drop the closure before waking the caller: it must not outlive `withoutActuallyEscaping`.
                jobBox.value = nil
                done.signal()
            }
            done.wait()
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
        wakeUp.signal()
    }

    /// Lets queued jobs finish, then ends the thread and waits for it.
    func stop() {
        state.withLock { $0.stopping = true }
        wakeUp.signal()
        finished.wait()
    }

    private func run() {
        state.withLock { $0.threadID = pthread_self() }
        while true {
            wakeUp.wait()
            let (jobs, stopping) = state.withLock { state in
                defer { state.jobs.removeAll(keepingCapacity: true) }
                return (state.jobs, state.stopping)
            }
            for job in jobs { job() }
            if stopping && jobs.isEmpty { break }
            if stopping { wakeUp.signal() }
        }
        finished.signal()
    }
}

/// A box that crosses a thread boundary while its owner is provably blocked waiting for it.
final class UncheckedBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
