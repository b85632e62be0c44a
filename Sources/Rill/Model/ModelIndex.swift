import Foundation

/// An index of a model type, on one field or on several (a compound index).
///
/// Declare a model's indexes in its static `indexes` property. Rill keeps every index in step with
/// the records in the same transaction as each save, builds a new index from the stored records
/// when a container first opens the store with it, and uses indexes to answer queries: equality
/// and ranges on the first field (and equality on a compound index's leading fields), `in` lists,
/// and sorts that follow the index's order.
///
/// For example:
///
/// ```swift
/// struct Book: PersistentModel {
///     var id: UUID
///     var title: String
///     var author: String
///     var pages: Int
///
///     static let indexes: [ModelIndex<Book>] = [
///         ModelIndex(\.author, \.title),
///         ModelIndex(\.pages),
///     ]
/// }
/// ```
///
/// Key paths must be chains of stored properties. Indexes read the stored fields by name: a
/// property that the model's `CodingKeys` store under another name (`case name = "full.name"`)
/// is indexed under that name, whatever characters it holds.
///
/// ## Unique indexes
///
/// ``unique(_:onConflict:)`` declares an index that no two records may share values of: one
/// field (`.unique(\.email)`, SwiftData's `@Attribute(.unique)`) or several together
/// (`.unique(\.city, \.zip)`, SwiftData's `#Unique`). Inserting a record whose values another
/// record has updates that record instead (``UniqueConflictPolicy/upsert``, the default), or
/// fails the save (``UniqueConflictPolicy/fail``):
///
/// ```swift
/// struct User: PersistentModel {
///     var id = UUID()
///     var email: String
///     var name: String
///
///     static let indexes: [ModelIndex<User>] = [.unique(\.email)]
/// }
/// ```
///
/// The rule is checked inside each save's write transaction, which LMDB runs one at a time
/// across processes, so it holds however many processes write. A record with a nil (or missing)
/// value for a field of the index is not held to it, as in SQL, nor one with a NaN, which Swift's
/// `==` finds equal to nothing. An update that would give a
/// record the values another record has fails the save in either mode. See
/// <doc:GettingStarted#Unique-attributes> for the whole rule.
public struct ModelIndex<Model: PersistentModel>: Sendable, Hashable {
    /// The indexed fields, as stored field paths (`["address", "city"]`).
    public let fieldPaths: [[String]]
    /// For a unique index, what an insert of values another record has does; nil for an index
    /// that records may share values of.
    public let uniqueness: UniqueConflictPolicy?

    /// An index on the given key paths, in order of significance.
    public init<each Value: IndexableValue>(_ keyPath: repeat KeyPath<Model, each Value>) {
        var paths: [[String]] = []
        for keyPath in repeat each keyPath {
            paths.append(FieldPath.components(of: keyPath, root: Model.self) ?? [])
        }
        fieldPaths = paths
        uniqueness = nil
    }

    private init(fieldPaths: [[String]], uniqueness: UniqueConflictPolicy?) {
        self.fieldPaths = fieldPaths
        self.uniqueness = uniqueness
    }

    /// A unique index on the given key paths: no two records have the same values of all of them.
    ///
    /// - Parameters:
    ///   - keyPath: one field, or several for a compound constraint (the values of all of them
    ///     together are unique, each alone need not be).
    ///   - onConflict: what inserting a record whose values another record has does: update that
    ///     record (``UniqueConflictPolicy/upsert``, the default) or fail the save
    ///     (``UniqueConflictPolicy/fail``).
    public static func unique<each Value: IndexableValue>(
        _ keyPath: repeat KeyPath<Model, each Value>, onConflict: UniqueConflictPolicy = .upsert
    ) -> ModelIndex {
        ModelIndex(fieldPaths: ModelIndex(repeat each keyPath).fieldPaths, uniqueness: onConflict)
    }

    /// The index's name in the store: its field paths, joined.
    var name: String { FieldPath.name(of: fieldPaths) }
}
