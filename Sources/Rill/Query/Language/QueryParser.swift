import Foundation

/// The parser of Rill's text query language, used by `rill query <store> "<text>"` and the daemon.
///
/// A query names an entity, optionally filters, sorts and windows it:
///
///     <Entity> [where <predicate>] [sort by <key> [asc|desc] (, <key> [asc|desc])*] [limit <n>] [offset <n>]
///
///     Book where isRead == false and pages > 300 and title contains[cd] "harry"
///         sort by author, title desc limit 20 offset 40
///
/// `Book` alone is a valid query: every Book. `where` comes right after the entity name; `sort by`,
/// `limit` and `offset` follow in any order, each at most once. `limit` and `offset` take
/// non-negative integer literals. Anything left over is an error.
///
/// ## Words
///
/// Keywords are case-insensitive: `where and or not in between contains beginswith endswith like
/// any all sort by asc desc limit offset nil null true false`. A field whose name is a keyword is
/// written in backticks: `` `limit` ``. QuerySymbol synonyms: `&&` for `and`, `||` for `or`, `!` for
/// a prefix `not`, `=` for `==`, `<>` for `!=`.
///
/// ## Values
///
/// - Paths: identifiers (letters, digits and `_`, not starting with a digit, or any text without
///   a backtick in backticks) separated by dots: `address.city` is `.field(["address", "city"])`.
///   After a dot a keyword needs no backticks (`release.limit`).
/// - Strings in double or single quotes, with the escapes `\"`, `\'`, `\\`, `\n`, `\t`, `\r`,
///   `\0` and `\u{1F600}`.
/// - Integers (`42`, `-7`) are `.int`; a decimal point or an exponent (`3.5`, `-0.25`, `1e3`)
///   makes a `.double`; an integer too big for `Int64` is a `.uint` up to `UInt64.max`, and a
///   `.double` beyond. A number beyond the range of `Double` is an error.
/// - `true`, `false`; `nil` and `null` are `.null`.
/// - Dates, written bare: `2024-05-01` (UTC midnight), `2024-05-01T10:30:00Z`,
///   `2024-05-01T10:30:00.250Z`, `2024-05-01T10:30:00+02:00` (also `+0200`). Seconds may be left
///   out (`T10:30Z`); a time without a zone is UTC.
/// - UUIDs, written bare: `3F2504E0-4F89-11D3-9A0C-0305E82C3301`.
/// - Arithmetic: `+ - * / %` with the usual precedence, unary minus (`.negate`, but a minus in
///   front of a number literal becomes part of the literal: `-7` is `.int(-7)`), `??` (coalesce,
///   right-associative, looser than arithmetic), `count(<value>)`, and parentheses.
///
/// A date or a UUID is recognised before arithmetic: `2024-05-01` is a date, never `2024 - 05 - 01`.
///
/// ## Predicates
///
/// From the loosest to the tightest binding: `or`, `and`, `not`, then a test. Chains are flat:
/// `a and b and c` is `.and([a, b, c])` (a parenthesized group stays a separate node).
///
/// - Comparisons: `== != < <= > >=` between two values; they cannot be chained (`a < b < c`).
/// - `x in [v1, v2]`, `x not in [...]` (the same as `not (x in [...])`).
/// - `x between a and b` (the `and` belongs to `between`), `x not between a and b`.
/// - String tests `contains`, `beginswith`, `endswith`, `like` (wildcards `*` and `?`), each
///   optionally followed by `[c]` (case-insensitive), `[d]` (diacritic-insensitive) or `[cd]`:
///   `title contains[cd] "harry"`; `title not contains "x"` negates the test.
/// - Quantifiers: `any <path> <test>` and `all <path> <test>`, where `<test>` is one of the tests
///   above with the element as its left side: `any tags == "new"` is
///   `.any(.field(["tags"]), body: .compare(.equal, .element([]), .literal(.string("new"))))`.
///   A body in parentheses may say more, naming the element `$` and its fields `$.name`:
///   `any items ($.price > 10 and $.stock == 0)`.
/// - A boolean field on its own is a test: `isRead` means `isRead == true`.
///
/// ## Errors and limits
///
/// Every failure throws a `QueryParseError` with the 1-based column (in Characters) where the
/// problem is and what was expected there, e.g. "expected a value after '>'". No input crashes
/// the parser: at most 32 parentheses, quantifiers and `count(`s may be open at once, and the
/// resulting tree is at most 128 nodes deep ("the query is nested too deeply"), so parsing, and
/// walking the result, fit in a small thread stack.
package enum QueryParser {
    /// Parses a whole query: `<Entity> [where <predicate>] [sort by <key> [asc|desc] (, <key> [asc|desc])*]
    /// [limit <n>] [offset <n>]`.
    package static func parse(_ text: String) throws(QueryParseError) -> Query {
        let parser = try QueryParserState(text)
        return try parser.parseQuery()
    }

    /// `parse(_:)`, with plain ASCII text read through its characters as any other text is when
    /// `readsBytes` is false: both ways must give the same answer (see `QueryText.plainASCII`).
    package static func parse(_ text: String, readsBytes: Bool) throws(QueryParseError) -> Query {
        let parser = try QueryParserState(text, readsBytes: readsBytes)
        return try parser.parseQuery()
    }

    /// Parses only a predicate (the part after `where`).
    package static func parsePredicate(_ text: String) throws(QueryParseError) -> QueryNode {
        let parser = try QueryParserState(text)
        let predicate = try parser.parseCondition(after: nil)
        try parser.expectEnd(after: "the predicate")
        return predicate.node
    }
}
