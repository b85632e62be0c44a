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

/// A value type that an index can order: numbers, strings, `Bool`, `Date`, `UUID`, `URL`,
/// `Decimal`, their optionals, and enums whose raw value is one of those (declare
/// `extension MyEnum: IndexableValue {}`).
public protocol IndexableValue {}

extension Int: IndexableValue {}
extension Int8: IndexableValue {}
extension Int16: IndexableValue {}
extension Int32: IndexableValue {}
extension Int64: IndexableValue {}
extension UInt: IndexableValue {}
extension UInt8: IndexableValue {}
extension UInt16: IndexableValue {}
extension UInt32: IndexableValue {}
extension UInt64: IndexableValue {}
extension Double: IndexableValue {}
extension Float: IndexableValue {}
extension Bool: IndexableValue {}
extension String: IndexableValue {}
extension Date: IndexableValue {}
extension UUID: IndexableValue {}
extension URL: IndexableValue {}
extension Decimal: IndexableValue {}
extension Optional: IndexableValue where Wrapped: IndexableValue {}

/// Stored field paths of key paths.
package enum FieldPath {
    /// The stored field path a key path reads (`\Book.address?.city` → `["address", "city"]`);
    /// nil when the key path is not a plain chain of properties.
    package static func components(of keyPath: AnyKeyPath, root: Any.Type) -> [String]? {
        KeyPathNames.names(of: keyPath, root: root)
    }
}
