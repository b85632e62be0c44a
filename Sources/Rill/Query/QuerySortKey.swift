import Foundation

/// A sort key of a query: a field path and a direction.
package struct QuerySortKey: Hashable, Sendable {
    package var path: [String]
    package var ascending: Bool

    package init(path: [String], ascending: Bool = true) {
        self.path = path
        self.ascending = ascending
    }
}
