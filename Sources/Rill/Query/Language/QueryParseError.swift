import Foundation

/// Why a text query could not be parsed, and where.
///
/// `description` renders the problem for a terminal, with a caret under the offending column:
///
///     error at column 19: expected a value after '>'
///     Book where pages >
///                       ^
package struct QueryParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, e.g. "expected a value after '>'" or "unterminated string".
    package var message: String
    /// The 1-based column, counted in Characters, where the problem is. One past the last
    /// character when the query ended too early.
    package var column: Int
    /// The whole query text.
    package var text: String

    package init(message: String, column: Int, text: String) {
        self.message = message
        self.column = column
        self.text = text
    }

    /// Three lines: "error at column N: message", the query text, and a caret under column N.
    ///
    /// Line breaks inside the query (and the message) are shown as spaces so the caret stays under
    /// its column; tabs before the column are repeated in the caret line so it lines up in a terminal.
    package var description: String {
        let shown = String(text.map { $0.isNewline ? " " : $0 })
        var caret = ""
        for character in text.prefix(max(column - 1, 0)) {
            caret.append(character == "\t" ? "\t" : " ")
        }
        caret += String(repeating: " ", count: max(column - 1 - text.count, 0))
        caret.append("^")
        let summary = String(message.map { $0.isNewline ? " " : $0 })
        return "error at column \(column): \(summary)\n\(shown)\n\(caret)"
    }
}
