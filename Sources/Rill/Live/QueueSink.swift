import Dispatch
import Foundation

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

    override func post(_ change: PendingChange) { queue.post(change, to: self) }

    override var deliveryQueue: DeliveryQueue? { queue }

    override func post(_ change: PendingChange, batch: inout DeliveryBatch) {
        batch.add(self, on: queue, change: change)
    }

    override func run(_ change: PendingChange) {
        if !flag.isCancelled { change.lend(T.self, to: handler) }
    }

    /// Makes (or takes) the change's models once for all of `sinks`: the observers of the live
    /// queries that share a result.
    override func run(_ change: PendingChange, for sinks: [LiveSink]) {
        // A change is for one model type, so its observers on queues are all of this class; the
        // check compares the classes of two objects.
        let sinkClass = ObjectIdentifier(type(of: self))
        change.lend(T.self) { results in
            for sink in sinks {
                guard ObjectIdentifier(type(of: sink)) == sinkClass else {
                    sink.run(change)
                    continue
                }
                let sink = unsafeDowncast(sink, to: QueueSink<T>.self)
                if !sink.flag.isCancelled { sink.handler(results) }
            }
        }
    }
}
