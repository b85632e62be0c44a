import Foundation

/// A punctuation or operator token.
enum QuerySymbol: Equatable {
    case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual
    case and, or, bang
    case plus, minus, star, slash, percent, coalesce
    case leftParen, rightParen, leftBracket, rightBracket, comma, dot
}

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

/// The reserved words, matched case-insensitively.
enum QueryKeyword: String {
    case `where`, and, or, not, `in`, between, contains, beginswith, endswith, like, any, all
    case sort, by, asc, desc, limit, offset, `nil`, null, `true`, `false`
}

/// A binary operator on values, by precedence.
enum QueryBinaryOperation {
    case coalesce
    case arithmetic(QueryArithmetic)

    var precedence: Int {
        switch self {
        case .coalesce: 1
        case .arithmetic(.add), .arithmetic(.subtract): 2
        case .arithmetic: 3
        }
    }

    /// Whether this operator, already on the stack, applies before `next` is pushed.
    func reducesBefore(_ next: QueryBinaryOperation) -> Bool {
        if case .coalesce = self, case .coalesce = next { return false }
        return precedence >= next.precedence
    }
}

// ASCII is answered from the code point: Unicode property lookups cost more than the rest of
// lexing a short query.
extension Character {
    var isASCIIDigit: Bool { asciiValue.map { (0x30...0x39).contains($0) } ?? false }

    var isASCIIHexDigit: Bool {
        guard let byte = asciiValue else { return false }
        return (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    var isASCIILetter: Bool {
        guard let byte = asciiValue else { return false }
        return (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    var startsName: Bool {
        guard asciiValue != nil else { return isLetter }
        return isASCIILetter || self == "_"
    }

    var continuesName: Bool {
        guard asciiValue != nil else { return isLetter || isNumber }
        return isASCIILetter || isASCIIDigit || self == "_"
    }

    /// `isWhitespace`, answered from the code point for ASCII.
    var isSpace: Bool {
        guard let byte = asciiValue else { return isWhitespace }
        return byte == 0x20 || (0x09...0x0D).contains(byte)
    }
}

/// Source text as quoted in a message: on one line, and shortened when long.
func sourceExcerpt(_ text: String) -> String {
    let line = String(text.map { $0.isNewline ? " " : $0 })
    return line.count > 24 ? line.prefix(20) + "…" : line
}
