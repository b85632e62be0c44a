import Foundation

/// Stored field paths of key paths.
@usableFromInline
package enum FieldPath {
    /// The stored field path a key path reads (`\Book.address?.city` → `["address", "city"]`);
    /// nil when the key path is not a plain chain of properties.
    @usableFromInline
    package static func components(of keyPath: AnyKeyPath, root: Any.Type) -> [String]? {
        KeyPathNames.names(of: keyPath, root: root)
    }
}
