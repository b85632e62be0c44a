import Dispatch
import Foundation

/// The observers of a live query, by observation number, in the order they were added.
struct LiveObservers {
    var nextID = 0
    var sinks: [(id: Int, sink: LiveSink)] = []
    var finished = false
}

/// An observer of a live query as the query keeps it: told of each change. Not generic, so
/// that the follower hands out a change without looking up type metadata; the subclass that
/// knows the element type makes the models, on the observer's side.
class LiveSink: @unchecked Sendable {
    // Sendable: the subclasses' state is immutable or Sendable.
    func post(_ change: PendingChange) {}
    /// The query ends: no change comes any more.
    func finish() {}
}

/// An observer called on a queue.
final class QueueSink<T: PersistentModel>: LiveSink, @unchecked Sendable {
    let queue: DeliveryQueue
    let flag: CancellationFlag
    let handler: @Sendable (ResultsChange<T>) -> Void

    init(queue: DeliveryQueue, flag: CancellationFlag, handler: @escaping @Sendable (ResultsChange<T>) -> Void) {
        self.queue = queue
        self.flag = flag
        self.handler = handler
    }

    override func post(_ change: PendingChange) {
        let (flag, handler) = (self.flag, self.handler)
        queue.post {
            if !flag.isCancelled { handler(change.results(T.self)) }
        }
    }
}

/// An observer fed through an `AsyncStream`.
final class StreamSink<T: PersistentModel>: LiveSink, @unchecked Sendable {
    let continuation: AsyncStream<ResultsChange<T>>.Continuation

    init(_ continuation: AsyncStream<ResultsChange<T>>.Continuation) { self.continuation = continuation }

    override func post(_ change: PendingChange) { continuation.yield(change.results(T.self)) }
    override func finish() { continuation.finish() }
}
