import Dispatch
import RillLocks

/// A job's outcome, waited for by the thread that asked for it.
final class JobCompletion: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let outcome = Lock<Result<Void, any Error>?>(nil)

    func complete(_ result: Result<Void, any Error>) {
        outcome.withLock { $0 = result }
        semaphore.signal()
    }

    func wait() throws {
        semaphore.wait()
        try outcome.withLock { $0 }?.get()
    }
}
