import Foundation

/// The transactions of a store's history as they commit: an asynchronous sequence from a token
/// on, returned by ``ModelContext/historyUpdates(after:matching:)``.
///
/// Each iteration reads the log on its own: the transactions already recorded after the token
/// first, then, after each commit of any process, those that came next. A token past the last
/// commit makes the first `next()` throw ``RillError`` with `.misuse`; an entity name of the
/// descriptor that is not the container's nor the store's, with `.unknownEntity`.
public struct HistoryObserver: AsyncSequence, Sendable {
    public typealias Element = HistoryTransaction

    let store: Store
    let after: HistoryToken
    let descriptor: HistoryDescriptor
    /// What the first `next()` throws, when the descriptor cannot be followed.
    var problem: RillError? = nil

    public func makeAsyncIterator() -> Iterator {
        Iterator(follower: Follower(store: store, after: after.sequence, descriptor: descriptor), problem: problem)
    }

    /// Reads the transactions of the sequence.
    public struct Iterator: AsyncIteratorProtocol {
        let follower: Follower
        var problem: RillError?

        public mutating func next() async throws -> HistoryTransaction? {
            if let problem {
                self.problem = nil
                throw problem
            }
            return try await follower.next()
        }
    }

    /// The state of one iteration: the position reached, the transactions read and not yet
    /// delivered, and the watch of the log. Used by one task at a time, as an iterator is.
    final class Follower: @unchecked Sendable {
        private let store: Store
        private var position: UInt64
        private var descriptor: HistoryDescriptor
        private var pending: [LogEntry] = []
        private var pendingIndex = 0
        private var watch: LogWatch?
        private var finished = false

        init(store: Store, after: UInt64, descriptor: HistoryDescriptor) {
            self.store = store
            self.position = after
            self.descriptor = descriptor
        }

        deinit { watch?.close() }

        func next() async throws -> HistoryTransaction? {
            while true {
                if pendingIndex < pending.count {
                    defer { pendingIndex += 1 }
                    return HistoryTransaction(pending[pendingIndex])
                }
                if finished { return nil }
                if Task.isCancelled { return nil }
                if watch == nil { watch = try store.log.watch() }
                if try read() { continue }
                guard !finished, let watch else { continue }
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (resumed: CheckedContinuation<Void, Never>) in
                        DispatchQueue.global().async {
                            watch.wait()
                            resumed.resume()
                        }
                    }
                } onCancel: {
                    watch.wake()
                }
                if Task.isCancelled { return nil }
            }
        }

        /// Reads what came after the position; true when there is something to deliver.
        private func read() throws -> Bool {
            let store = self.store
            var request = descriptor
            request.after = HistoryToken(sequence: position)
            request.sortOrder = .forward
            // A batch of none would read nothing and pass every commit by.
            request.fetchLimit = descriptor.fetchLimit.map { Swift.max($0, 1) }
            // Only commits on disk reach observers: the flush, when one is due, comes first.
            let (entries, head) = try store.read { snapshot in
                let head = try store.observableHead(in: snapshot)
                return (try store.history(request, in: snapshot), head)
            }
            let end = Swift.min(head, descriptor.through?.sequence ?? head)
            // A full batch ends at its last transaction; a shorter one covers the log to its end.
            if let limit = request.fetchLimit, entries.count >= limit, let last = entries.last {
                position = last.sequence
            } else {
                position = Swift.max(position, end)
            }
            if let through = descriptor.through, position >= through.sequence { finished = true }
            pending = entries
            pendingIndex = 0
            return !entries.isEmpty
        }
    }
}
