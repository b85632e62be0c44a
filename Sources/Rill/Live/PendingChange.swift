import Foundation

/// A change on its way to a live query's observers: rows as the follower worked it out, made
/// into models by each observer's call; or models already (a new descriptor's change).
final class PendingChange: @unchecked Sendable {
    // Sendable: immutable; rows are immutable, and `models` is a Sendable `ResultsChange`.
    private let rows: RowChange?
    private let models: Any?

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
        if let rows { return rows.results(LiveRow<T>.model) }
        return models as! ResultsChange<T>
    }
}
