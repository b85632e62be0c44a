import Dispatch
import Foundation

/// An observer of a live query as the query keeps it: told of each change. Not generic, so
/// that the follower hands out a change without looking up type metadata; the subclass that
/// knows the element type makes the models, on the observer's side.
class LiveSink: @unchecked Sendable {
    // Sendable: the subclasses' state is immutable or Sendable.
    func post(_ change: PendingChange) {}
    /// The query ends: no change comes any more.
    func finish() {}
}
