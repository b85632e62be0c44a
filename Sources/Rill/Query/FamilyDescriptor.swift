import Foundation

/// What to fetch from a family of model types, deep: records of every kind, each decoded as the
/// kind it names, as values of the family's base (see ``ModelFamily``).
///
/// For example:
///
/// ```swift
/// var descriptor = FamilyDescriptor<any Recipe>(
///     predicate: #Predicate { $0 is BakedGood || $0.name.contains("tea") },
///     sortBy: [SortDescriptor(\.name)])
/// descriptor.fetchLimit = 10
/// let recipes: [any Recipe] = try context.fetch(descriptor)
/// ```
///
/// In the predicate, `$0 is BakedGood` and `($0 as? BakedGood)?.minutes` test the record's
/// discriminator, and are served by its index; the base's requirements (`$0.name`) read the
/// field each kind stores them in. Results are the models for which the predicate is true, in
/// the order of `sortBy`, ties broken by identifier, as with ``FetchDescriptor``.
public struct FamilyDescriptor<Base>: Sendable {
    /// Which models to include; nil includes every model of the family.
    public var predicate: Predicate<Base>?
    /// The order of the results, most significant first.
    public var sortBy: [SortDescriptor<Base>]
    /// The largest number of models to return; nil for no limit.
    public var fetchLimit: Int?
    /// How many models to skip from the start of the ordered results; nil for none.
    public var fetchOffset: Int?
    /// Whether a context's fetch includes its unsaved inserts, updates and deletes (true by
    /// default); false reads the store as saved. ``FamilyLiveQuery`` results always follow the
    /// saved store.
    public var includePendingChanges = true

    /// A descriptor for the models of the family of `Base` matching `predicate`, ordered by `sortBy`.
    public init(predicate: Predicate<Base>? = nil, sortBy: [SortDescriptor<Base>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
    }
}
