/// Where a parsed query came from: its text, and the column of every field path in it, so that
/// a problem found after parsing (a field the entity does not have) can point at its place.
///
/// Paths are listed in the order they appear in the text: the predicate's, then the sort keys'.
/// Only paths written in the text are listed: a quantifier's implicit element (`any tags == "x"`)
/// and a bare `$` name no field.
package struct QuerySource: Sendable {
    /// A path written in the query.
    package struct Path: Sendable, Hashable {
        /// The field names, dot-separated in the text.
        package var path: [String]
        /// Whether the path is read from a quantifier's element (`$.price`), not from the record.
        package var isElement: Bool
        /// The 1-based column, in Characters, of its first character (of `$` for an element path).
        package var column: Int

        package init(path: [String], isElement: Bool, column: Int) {
            self.path = path
            self.isElement = isElement
            self.column = column
        }
    }

    /// The whole query text.
    package var text: String
    package var paths: [Path]

    package init(text: String, paths: [Path]) {
        self.text = text
        self.paths = paths
    }
}
