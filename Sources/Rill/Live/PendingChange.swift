import Foundation
import RillLocks

/// A change on its way to a live query's observers: rows as the follower worked it out, made
/// into models by each observer's call; or models already (a new descriptor's change).
final class PendingChange: @unchecked Sendable {
    // Sendable: immutable but for `made`, which its lock guards; rows are immutable, and a box's
    // `ResultsChange` is Sendable and never changes.
    private let rows: RowChange?
    /// The change as models: made by the first observer's call when there are rows, given
    /// otherwise. The observers of every live query that shares a result are handed this one
    /// change, and each would otherwise make the same models again.
    private let made: Lock<Made?>

    /// A `Models<T>` and `T`, so that an observer of `T` takes the box back after comparing one
    /// identifier, where a cast from `Any` to `ResultsChange<T>` looks up the generic type's
    /// metadata (code generic over the model type is not specialized for the models of other
    /// modules) for every observer.
    private struct Made {
        var model: ObjectIdentifier
        var box: AnyObject
    }

    private final class Models<T: PersistentModel> {
        let change: ResultsChange<T>
        init(_ change: ResultsChange<T>) { self.change = change }

        /// Calls `handler` with the change lent, not copied: a copy of a `ResultsChange<T>`
        /// made in code generic over `T` is destroyed through the metadata of each of its arrays,
        /// eight lookups of generic metadata, for every observer.
        func lend(to handler: (ResultsChange<T>) -> Void) { handler(change) }
    }

    init(rows: RowChange) {
        self.rows = rows
        self.made = Lock(nil)
    }

    init<T: PersistentModel>(models: ResultsChange<T>) {
        self.rows = nil
        self.made = Lock(Made(model: ObjectIdentifier(T.self), box: Models(models)))
    }

    /// The change as models of `T`, the element type of the query it was made for.
    func results<T: PersistentModel>(_ type: T.Type) -> ResultsChange<T> {
        models(T.self).change
    }

    /// Calls `handler` with the change as models of `T`, lent for the call.
    func lend<T: PersistentModel>(_ type: T.Type, to handler: (ResultsChange<T>) -> Void) {
        models(T.self).lend(to: handler)
    }

    private func models<T: PersistentModel>(_ type: T.Type) -> Models<T> {
        if let made = made.withLock({ $0 }), made.model == ObjectIdentifier(T.self) {
            // Made for `T`: the box is a `Models<T>`.
            return unsafeDowncast(made.box, to: Models<T>.self)
        }
        // Rows made into models here (once, unless two observers make them at the same time).
        // Models given for another type cannot happen: a change is made for one query's type.
        guard let rows else { preconditionFailure("a change of models of another type than \(T.self)") }
        let models = Models(rows.results(LiveRow<T>.model))
        made.withLock { $0 = Made(model: ObjectIdentifier(T.self), box: models) }
        return models
    }
}
