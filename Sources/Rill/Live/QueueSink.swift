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

    override func post(_ change: PendingChange) {
        let (flag, handler) = (self.flag, self.handler)
        queue.post {
            if !flag.isCancelled { change.lend(T.self, to: handler) }
        }
    }
}
