import Foundation

/// A token of a query's text, with its column and length.
struct QueryToken {
    enum Kind {
        /// An identifier or keyword; `quoted` when it was written in backticks.
        case name(String, quoted: Bool)
        /// Digits only.
        case integer(String)
        /// Digits with a fraction and/or an exponent.
        case decimal(String)
        case string(String)
        case date(Date)
        case uuid(UUID)
        /// `$`, the current element of a quantifier.
        case dollar
        case symbol(QuerySymbol)
        case end
    }

    var kind: Kind
    /// The keyword an unquoted name spells, if any.
    var keyword: QueryKeyword?
    /// 1-based column of the first character.
    var column: Int
    /// Length in Characters.
    var length: Int
}
