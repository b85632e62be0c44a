import Foundation

/// A punctuation or operator token.
enum QuerySymbol: Equatable {
    case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual
    case and, or, bang
    case plus, minus, star, slash, percent, coalesce
    case leftParen, rightParen, leftBracket, rightBracket, comma, dot
}
