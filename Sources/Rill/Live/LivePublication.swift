import Dispatch
import Synchronization

/// New results for one live query, published with every other query's for the same commit.
///
/// The follower calls the three steps for every query of a commit in turn: ``willPublish()``
/// for all, then ``publish()`` for all under the store-wide publication lock, then ``deliver()``
/// for all.
class LivePublication {
    /// Before the store-wide publication lock is taken (observation's will-change).
    func willPublish() {}
    /// Under the lock: the new results become visible.
    func publish() {}
    /// After the lock: observation's did-change, and the change handed to the observers.
    func deliver() {}
}
