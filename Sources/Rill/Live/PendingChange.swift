import Foundation
import RillLocks

/// A change on its way to a live query's observers: rows as the follower worked it out, made
/// into models by each observer's call; or models already (a new descriptor's change).
final class PendingChange: @unchecked Sendable {
    // Sendable: immutable but for `made`, which its lock guards; rows are immutable, and
    // `models` is a Sendable `ResultsChange`.
    private let rows: RowChange?
    private let models: Any?
    /// The rows' change made into models by the first call: the observers of every live query
    /// that shares a result are handed this one change, and each would otherwise make the same
    /// models again.
    private let made = Lock<Any?>(nil)

    init(rows: RowChange) {
        self.rows = rows
        self.models = nil
    }

    init<T: PersistentModel>(models: ResultsChange<T>) {
        self.rows = nil
        self.models = models
    }

    /// The change as models of `T`, the element type of the query it was made for.
    func results<T: PersistentModel>(_ type: T.Type) -> ResultsChange<T> {
        guard let rows else { return models as! ResultsChange<T> }
        if let made = made.withLock({ $0 }) as? ResultsChange<T> { return made }
        let results = rows.results(LiveRow<T>.model)
        made.withLock { $0 = results }
        return results
    }
}
