import Foundation

/// A parsed node with how deep it is and the column where it starts.
struct ParsedNode {
    var node: QueryNode
    var depth: Int
    var column: Int
}
