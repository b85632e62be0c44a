import Foundation
import RillLocks
import Synchronization

/// Applies a store's replicated log to it as commits arrive, every node's (its own included: those
/// the store holds already are skipped), on a thread of its own; stops when released.
///
/// A lost connection is retried every half second from the store's head; a log that disagrees
/// with the store stops the follower, and ``failure`` tells why.
package final class ReplicaFollower: Sendable {
    private let state: State

    private final class State: Sendable {
        let stopped = Atomic<Bool>(false)
        let failure = Lock<RillError?>(nil)
        /// Signalled once when the thread returns.
        let ended = DispatchSemaphore(value: 0)
        let joined = Atomic<Bool>(false)
    }

    /// Starts following `store`'s replica (the store must have one).
    package init(_ store: Store) {
        precondition(store.replica != nil, "a store without a replicated log has nothing to follow")
        let state = State()
        self.state = state
        let thread = Thread {
            Self.run(store, state)
            state.ended.signal()
        }
        thread.name = "rill-replica-follower"
        thread.start()
    }

    deinit {
        state.stopped.store(true, ordering: .relaxed)
    }

    /// Stops following and waits for the commits being applied, if any: once it returns, the
    /// follower no longer touches the store. Waits at most for one request to the log to end.
    package func stop() {
        state.stopped.store(true, ordering: .relaxed)
        guard !state.joined.exchange(true, ordering: .relaxed) else { return }
        state.ended.wait()
    }

    /// Why the follower stopped, nil while it runs.
    package var failure: RillError? { state.failure.withLock { $0 } }

    private static func run(_ store: Store, _ state: State) {
        guard let replica = store.replica else { return }
        var feed: (any LogReplicaFeed)?
        while !state.stopped.load(ordering: .relaxed) {
            do {
                if feed == nil {
                    // What the log holds beyond the store first, read by sequence, then the feed after it.
                    try store.catchUpWithReplica()
                    feed = try replica.follow(from: try store.head() + 1)
                }
                guard let first = try feed!.next(timeout: 0.25) else { continue }
                var batch = [first]
                while batch.count < 256, let next = try feed!.next(timeout: 0.001) { batch.append(next) }
                _ = try store.applyReplicated(batch)
            } catch let error as RillError where error.code == .replicationUnavailable {
                feed = nil
                for _ in 0..<10 where !state.stopped.load(ordering: .relaxed) {
                    Thread.sleep(forTimeInterval: 0.05)
                }
            } catch let error as RillError {
                state.failure.withLock { $0 = error }
                return
            } catch {
                state.failure.withLock { $0 = RillError(.replicationDiverged, "\(error)", underlyingError: error) }
                return
            }
        }
    }
}
