import Foundation

/// What to fetch: which models, in what order, and which slice of the results.
///
/// For example:
///
/// ```swift
/// var descriptor = FetchDescriptor<Book>(
///     predicate: #Predicate { !$0.isRead },
///     sortBy: [SortDescriptor(\.author), SortDescriptor(\.title)]
/// )
/// descriptor.fetchLimit = 20
/// let unread = try context.fetch(descriptor)
/// ```
///
/// Results are always the models for which the predicate is true, in the order of `sortBy`,
/// with ties (and an empty `sortBy`) broken by identifier, so the same store gives the same
/// order every time. A sort puts `nil` first and NaN after every number (both reversed by a
/// reverse sort). Identifiers order as their stored keys do: integers by value, UUIDs by their
/// bytes, strings by their UTF-8 bytes (Swift's `<` for ASCII identifiers).
public struct FetchDescriptor<T: PersistentModel>: Sendable {
    /// Which models to include; nil includes every model of the type.
    public var predicate: Predicate<T>?
    /// The order of the results, most significant first.
    public var sortBy: [SortDescriptor<T>]
    /// The largest number of models to return; nil for no limit.
    public var fetchLimit: Int?
    /// How many models to skip from the start of the ordered results; nil for none.
    public var fetchOffset: Int?
    /// The relationships to read with each model: the ``Reference/model`` of a reference, or
    /// the models of a ``Related`` inverse, so that a list reads them once each instead of once
    /// per model (for example `[\.ingredients]`). Empty by default. Related models read this way
    /// do not prefetch their own relationships.
    public var relationshipKeyPathsForPrefetching: [PartialKeyPath<T> & Sendable] = []
    /// The properties to read, for SwiftData's callers: empty (the default) for all of them.
    ///
    /// SwiftData reads the others when they are first used, so the models it returns are whole
    /// either way; a Rill model is a value, decoded whole, so every property is read whatever
    /// this lists, and the results are the same.
    public var propertiesToFetch: [PartialKeyPath<T> & Sendable] = []
    /// Whether a context's fetch includes its unsaved inserts, updates and deletes (true by
    /// default, as in SwiftData); false reads the store as saved. ``LiveQuery`` results always
    /// follow the saved store.
    public var includePendingChanges = true

    /// A descriptor for the models matching `predicate`, ordered by `sortBy`.
    public init(predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
    }
}
