/// What an "expected …" failure says the missing part should have come after, put into words
/// only when a failure is thrown: the parser passes one down at every step, and nearly every
/// parse fails nowhere.
enum QueryParseAfter: ExpressibleByStringLiteral {
    /// Written as it is: `where`, `sort by`.
    case words(String)
    /// The token's text in quotes: `'=='`.
    case quoted(QueryToken)
    /// A keyword bare, any other token quoted.
    case described(QueryToken)

    init(stringLiteral value: String) {
        self = .words(value)
    }
}
