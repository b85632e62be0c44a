/// What a save does with a new record whose values of a unique index another record already has.
///
/// Declared with each unique index (``ModelIndex/unique(_:onConflict:)``) and kept with it in the
/// store's catalog, so that every writer — a model type, `rill insert`, the daemon — follows the
/// same rule.
public enum UniqueConflictPolicy: String, Sendable, Hashable, CaseIterable {
    /// The insert updates the record that has the values (SwiftData's `@Attribute(.unique)`):
    /// that record keeps its identifier and takes the new record's other values, and no record
    /// with the new record's identifier is stored. The log records an update of it.
    case upsert
    /// The save fails with ``RillError/Code/uniqueConflict`` and writes nothing.
    case fail
}
