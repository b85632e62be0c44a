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
/// Key paths must be chains of stored properties whose names are their coding keys (the default
/// of synthesized `Codable`), since indexes read the stored fields by name.
public struct ModelIndex<Model: PersistentModel>: Sendable, Hashable {
    /// The indexed fields, as stored field paths (`["address", "city"]`).
    public let fieldPaths: [[String]]

    /// An index on the given key paths, in order of significance.
    public init<each Value: IndexableValue>(_ keyPath: repeat KeyPath<Model, each Value>) {
        var paths: [[String]] = []
        for keyPath in repeat each keyPath {
            paths.append(FieldPath.components(of: keyPath, root: Model.self) ?? [])
        }
        fieldPaths = paths
    }

    /// The index's name in the store: its field paths, joined.
    var name: String { fieldPaths.map { $0.joined(separator: ".") }.joined(separator: ",") }
}
