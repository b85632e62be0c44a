/// What an "expected …" failure says the missing part should have come after, put into words
/// only when a failure is thrown: the parser passes one down at every step, and nearly every
/// parse fails nowhere.
enum QueryParseAfter: ExpressibleByStringLiteral {
    /// Where a token is and the keyword it spells: all a message reads of it. Held instead of the
    /// token, whose text made each copy of this value (one at each step down) a call of its own.
    struct Span {
        var column: Int
        var length: Int
        var keyword: QueryKeyword?

        /// The token as a message reads it: its place and keyword, not its text.
        var token: QueryToken { QueryToken(kind: .end, keyword: keyword, column: column, length: length) }
    }

    /// Written as it is: `where`, `sort by`.
    case words(String)
    /// The token's text in quotes: `'=='`.
    case quotedToken(Span)
    /// A keyword bare, any other token quoted.
    case describedToken(Span)

    init(stringLiteral value: String) {
        self = .words(value)
    }

    /// The token's text in quotes: `'=='`.
    static func quoted(_ token: QueryToken) -> QueryParseAfter {
        .quotedToken(Span(column: token.column, length: token.length, keyword: token.keyword))
    }

    /// A keyword bare, any other token quoted.
    static func described(_ token: QueryToken) -> QueryParseAfter {
        .describedToken(Span(column: token.column, length: token.length, keyword: token.keyword))
    }
}
