import Dispatch
import Foundation

/// An observer of a live query as the query keeps it: told of each change. Not generic, so
/// that the follower hands out a change without looking up type metadata; the subclass that
/// knows the element type makes the models, on the observer's side.
class LiveSink: @unchecked Sendable {
    // Sendable: the subclasses' state is immutable or Sendable.
    func post(_ change: PendingChange) {}
    /// The queue the observer is called on, for the sinks that post to one.
    var deliveryQueue: DeliveryQueue? { nil }
    /// Posts `change`, or adds the sink to `batch` (which posts it later, in the same order
    /// for this sink).
    func post(_ change: PendingChange, batch: inout DeliveryBatch) { post(change) }
    /// On the observer's queue: tells the observer of `change` (for the sinks that post to a
    /// `DeliveryQueue`).
    func run(_ change: PendingChange) {}
    /// On the observer's queue: tells each of `sinks` (this one first) of `change`.
    func run(_ change: PendingChange, for sinks: [LiveSink]) {
        for sink in sinks { sink.run(change) }
    }
    /// The query ends: no change comes any more.
    func finish() {}
}
