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
/// written in backticks: `` `limit` ``. Symbol synonyms: `&&` for `and`, `||` for `or`, `!` for
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
///   makes a `.double`, and so does an integer too big for `Int64`. A number beyond the range of
///   `Double` is an error.
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
        let parser = try Parser(text)
        return try parser.parseQuery()
    }

    /// Parses only a predicate (the part after `where`).
    package static func parsePredicate(_ text: String) throws(QueryParseError) -> QueryNode {
        let parser = try Parser(text)
        let predicate = try parser.parseCondition(after: nil)
        try parser.expectEnd(after: "the predicate")
        return predicate.node
    }
}

// MARK: - Tokens

/// A punctuation or operator token.
private enum Symbol: Equatable {
    case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual
    case and, or, bang
    case plus, minus, star, slash, percent, coalesce
    case leftParen, rightParen, leftBracket, rightBracket, comma, dot
}

private struct Token {
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
        case symbol(Symbol)
        case end
    }

    var kind: Kind
    /// The keyword an unquoted name spells, if any.
    var keyword: Keyword?
    /// 1-based column of the first character.
    var column: Int
    /// Length in Characters.
    var length: Int
}

/// The reserved words, matched case-insensitively.
private enum Keyword: String {
    case `where`, and, or, not, `in`, between, contains, beginswith, endswith, like, any, all
    case sort, by, asc, desc, limit, offset, `nil`, null, `true`, `false`
}

/// How many parentheses, quantifiers and `count(`s may be open at once: the parser's recursion.
private let maximumNesting = 32
/// How deep the resulting `QueryNode` may be, so that walking it cannot exhaust a stack either.
private let maximumDepth = 128

/// A binary operator on values, by precedence.
private enum BinaryOperation {
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
    func reducesBefore(_ next: BinaryOperation) -> Bool {
        if case .coalesce = self, case .coalesce = next { return false }
        return precedence >= next.precedence
    }
}

// ASCII is answered from the code point: Unicode property lookups cost more than the rest of
// lexing a short query.
extension Character {
    fileprivate var isASCIIDigit: Bool { asciiValue.map { (0x30...0x39).contains($0) } ?? false }

    fileprivate var isASCIIHexDigit: Bool {
        guard let byte = asciiValue else { return false }
        return (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    fileprivate var isASCIILetter: Bool {
        guard let byte = asciiValue else { return false }
        return (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    fileprivate var startsName: Bool {
        guard asciiValue != nil else { return isLetter }
        return isASCIILetter || self == "_"
    }

    fileprivate var continuesName: Bool {
        guard asciiValue != nil else { return isLetter || isNumber }
        return isASCIILetter || isASCIIDigit || self == "_"
    }

    /// `isWhitespace`, answered from the code point for ASCII.
    fileprivate var isSpace: Bool {
        guard let byte = asciiValue else { return isWhitespace }
        return byte == 0x20 || (0x09...0x0D).contains(byte)
    }
}

/// Source text as quoted in a message: on one line, and shortened when long.
private func excerpt(_ text: String) -> String {
    let line = String(text.map { $0.isNewline ? " " : $0 })
    return line.count > 24 ? line.prefix(20) + "…" : line
}

// MARK: - Lexer

private struct Lexer {
    let text: String
    let characters: [Character]
    /// Each character's ASCII value, or `nonASCII`: the hot tests read these bytes.
    let ascii: [UInt8]
    static let nonASCII: UInt8 = 0xFF
    var position = 0
    var tokens: [Token] = []

    init(_ text: String, _ characters: [Character]) {
        self.text = text
        self.characters = characters
        ascii = characters.map { $0.asciiValue ?? Self.nonASCII }
    }

    /// Whether the character at `index` is an ASCII digit (false past the end).
    func isDigit(_ index: Int) -> Bool { index < ascii.count && (0x30...0x39).contains(ascii[index]) }

    /// Whether the character at `index` continues a name (false past the end).
    func continuesName(_ index: Int) -> Bool {
        guard index < ascii.count else { return false }
        let byte = ascii[index]
        guard byte != Self.nonASCII else { return characters[index].continuesName }
        return (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
            || byte == 0x5F
    }

    /// The characters `start..<end` as a string.
    func string(_ start: Int, _ end: Int) -> String {
        ascii[start..<end].contains(Self.nonASCII)
            ? String(characters[start..<end]) : String(decoding: ascii[start..<end], as: UTF8.self)
    }

    func failure(_ message: String, at index: Int) -> QueryParseError {
        QueryParseError(message: message, column: index + 1, text: text)
    }

    func character(_ index: Int) -> Character? {
        index < characters.count ? characters[index] : nil
    }

    mutating func emit(_ kind: Token.Kind, from start: Int) {
        var keyword: Keyword?
        if case .name(let name, quoted: false) = kind { keyword = Keyword(rawValue: name.lowercased()) }
        tokens.append(Token(kind: kind, keyword: keyword, column: start + 1, length: position - start))
    }

    mutating func tokenize() throws(QueryParseError) -> [Token] {
        while let current = character(position) {
            if current.isSpace {
                position += 1
                continue
            }
            let start = position
            if let uuid = uuid(at: start) {
                position += 36
                emit(.uuid(uuid), from: start)
            } else if looksLikeDate(at: start) {
                try lexDate()
            } else if current.isASCIIDigit {
                try lexNumber()
            } else if current.startsName {
                while continuesName(position) { position += 1 }
                emit(.name(string(start, position), quoted: false), from: start)
            } else if current == "`" {
                try lexQuotedName()
            } else if let first = current.unicodeScalars.first, first == "\"" || first == "'" {
                // A quote and the combining mark after it are one Character: the string starts
                // with the mark.
                try lexString()
            } else if current == "$" {
                position += 1
                emit(.dollar, from: start)
            } else {
                try lexSymbol()
            }
        }
        tokens.append(Token(kind: .end, keyword: nil, column: characters.count + 1, length: 0))
        return tokens
    }

    /// A UUID in its 8-4-4-4-12 hex form, not running on into a name or number.
    func uuid(at start: Int) -> UUID? {
        guard start + 36 <= characters.count else { return nil }
        for offset in 0..<36 {
            let character = characters[start + offset]
            switch offset {
            case 8, 13, 18, 23:
                guard character == "-" else { return nil }
            default:
                guard character.isASCIIHexDigit else { return nil }
            }
        }
        if let next = character(start + 36), next.continuesName || next == "-" { return nil }
        return UUID(uuidString: String(characters[start..<start + 36]))
    }

    /// `dddd-dd-d…`: the start of a date literal.
    func looksLikeDate(at start: Int) -> Bool {
        guard start + 9 <= characters.count else { return false }
        for offset in 0..<9 {
            switch offset {
            case 4, 7:
                guard ascii[start + offset] == UInt8(ascii: "-") else { return false }
            default:
                guard isDigit(start + offset) else { return false }
            }
        }
        return true
    }

    mutating func lexDate() throws(QueryParseError) {
        let start = position
        while let next = character(position),
            next.isASCIIDigit || next.isASCIILetter || next == "-" || next == ":" || next == "." || next == "+"
        {
            position += 1
        }
        let literal = Array(characters[start..<position])
        guard let date = DateLiteral.parse(literal) else {
            throw failure("invalid date '\(excerpt(String(literal)))'", at: start)
        }
        emit(.date(date), from: start)
    }

    mutating func lexNumber() throws(QueryParseError) {
        let start = position
        var isDecimal = false
        skipDigits()
        if character(position) == ".", character(position + 1)?.isASCIIDigit == true {
            position += 1
            skipDigits()
            isDecimal = true
        }
        if let e = character(position), e == "e" || e == "E" {
            var next = position + 1
            if let sign = character(next), sign == "+" || sign == "-" { next += 1 }
            if character(next)?.isASCIIDigit == true {
                position = next
                skipDigits()
                isDecimal = true
            }
        }
        if continuesName(position) {
            while continuesName(position) { position += 1 }
            throw failure("invalid number '\(excerpt(string(start, position)))'", at: start)
        }
        let digits = string(start, position)
        emit(isDecimal ? .decimal(digits) : .integer(digits), from: start)
    }

    mutating func skipDigits() {
        while isDigit(position) { position += 1 }
    }

    mutating func lexQuotedName() throws(QueryParseError) {
        let start = position
        position += 1
        while let next = character(position), next != "`", !next.isNewline { position += 1 }
        guard character(position) == "`" else { throw failure("unterminated backticked name", at: start) }
        let name = String(characters[start + 1..<position])
        guard !name.isEmpty else { throw failure("empty backticked name", at: start) }
        position += 1
        emit(.name(name, quoted: true), from: start)
    }

    mutating func lexString() throws(QueryParseError) {
        let start = position
        let opening = characters[start].unicodeScalars
        let quote = Character(opening.first!)
        var value = String(String.UnicodeScalarView(opening.dropFirst()))
        position += 1
        while true {
            guard let next = character(position) else { throw failure("unterminated string", at: start) }
            if next == quote {
                position += 1
                break
            }
            if next.unicodeScalars.first == quote.unicodeScalars.first {
                throw failure("a combining mark cannot follow a closing quote", at: position)
            }
            guard next == "\\" else {
                value.append(next)
                position += 1
                continue
            }
            guard let escaped = character(position + 1) else { throw failure("unterminated string", at: start) }
            switch escaped {
            case "\"", "'", "\\":
                value.append(escaped)
            case "n": value.append("\n")
            case "t": value.append("\t")
            case "r": value.append("\r")
            case "0": value.append("\0")
            case "u":
                value.unicodeScalars.append(try unicodeEscape())
                continue
            default:
                throw failure("unknown escape '\\\(Self.visible(escaped))' in string", at: position)
            }
            position += 2
        }
        emit(.string(value), from: start)
    }

    /// `\u{1F600}` at `position`; moves past it.
    mutating func unicodeEscape() throws(QueryParseError) -> Unicode.Scalar {
        let start = position
        var end = start + 2
        guard character(end) == "{" else {
            throw failure("expected '{' after \\u; unicode escapes are written \\u{1F600}", at: start)
        }
        end += 1
        while let next = character(end), next.isASCIIHexDigit { end += 1 }
        let hex = String(characters[start + 3..<end])
        guard character(end) == "}" else {
            throw failure("expected '}' to close the unicode escape \\u{\(excerpt(hex))", at: start)
        }
        end += 1
        guard (1...8).contains(hex.count), let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) else {
            throw failure("invalid unicode escape '\\u{\(excerpt(hex))}'", at: start)
        }
        position = end
        return scalar
    }

    mutating func lexSymbol() throws(QueryParseError) {
        let start = position
        let first = characters[start]
        let second = character(start + 1)
        let symbol: Symbol
        var length = 1
        switch first {
        case "=":
            symbol = .equal
            if second == "=" { length = 2 }
        case "!":
            symbol = second == "=" ? .notEqual : .bang
            if second == "=" { length = 2 }
        case "<":
            switch second {
            case "=": (symbol, length) = (.lessOrEqual, 2)
            case ">": (symbol, length) = (.notEqual, 2)
            default: symbol = .less
            }
        case ">":
            symbol = second == "=" ? .greaterOrEqual : .greater
            if second == "=" { length = 2 }
        case "&" where second == "&": (symbol, length) = (.and, 2)
        case "|" where second == "|": (symbol, length) = (.or, 2)
        case "?" where second == "?": (symbol, length) = (.coalesce, 2)
        case "+": symbol = .plus
        case "-": symbol = .minus
        case "*": symbol = .star
        case "/": symbol = .slash
        case "%": symbol = .percent
        case "(": symbol = .leftParen
        case ")": symbol = .rightParen
        case "[": symbol = .leftBracket
        case "]": symbol = .rightBracket
        case ",": symbol = .comma
        case ".": symbol = .dot
        default:
            let hint: String =
                switch first {
                case "&": "; use '&&' or and"
                case "|": "; use '||' or or"
                case "?": "; only '??' is an operator"
                default: ""
                }
            throw failure("unexpected character '\(Self.visible(first))'\(hint)", at: start)
        }
        position += length
        emit(.symbol(symbol), from: start)
    }

    /// A character as it can be shown in a message: control characters as `U+XXXX`.
    static func visible(_ character: Character) -> String {
        guard character.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return String(character)
        }
        return character.unicodeScalars.map { "U+" + String(format: "%04X", $0.value) }.joined(separator: " ")
    }
}

/// ISO-8601 dates as the language writes them.
private enum DateLiteral {
    /// Seconds from 1970-01-01 to 2001-01-01, Foundation's reference date.
    static let referenceOffset = 978_307_200

    static func parse(_ characters: [Character]) -> Date? {
        var index = 0
        func number(_ count: Int) -> Int? {
            guard index + count <= characters.count else { return nil }
            var value = 0
            for character in characters[index..<index + count] {
                guard character.isASCIIDigit, let digit = character.wholeNumberValue else { return nil }
                value = value * 10 + digit
            }
            index += count
            return value
        }
        func take(_ options: Character...) -> Bool {
            guard index < characters.count, options.contains(characters[index]) else { return false }
            index += 1
            return true
        }

        guard let year = number(4), take("-"), let month = number(2), take("-"), let day = number(2),
            (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year)
        else { return nil }
        var seconds = daysSinceEpoch(year: year, month: month, day: day) * 86_400
        var fraction = 0.0
        if index < characters.count {
            guard take("T", "t"), let hour = number(2), take(":"), let minute = number(2), hour < 24, minute < 60
            else { return nil }
            seconds += hour * 3_600 + minute * 60
            if take(":") {
                guard let second = number(2), second < 60 else { return nil }
                seconds += second
                if take(".") {
                    let digitsStart = index
                    while index < characters.count, characters[index].isASCIIDigit { index += 1 }
                    guard index > digitsStart, let value = Double("0." + String(characters[digitsStart..<index]))
                    else { return nil }
                    fraction = value
                }
            }
            if take("Z", "z") {
                // UTC.
            } else if index < characters.count {
                let sign: Int
                if take("+") {
                    sign = 1
                } else if take("-") {
                    sign = -1
                } else {
                    return nil
                }
                guard let hours = number(2), hours < 24 else { return nil }
                var minutes = 0
                if index < characters.count {
                    _ = take(":")
                    guard let value = number(2), value < 60 else { return nil }
                    minutes = value
                }
                seconds -= sign * (hours * 3_600 + minutes * 60)
            }
            guard index == characters.count else { return nil }
        }
        return Date(timeIntervalSinceReferenceDate: Double(seconds - referenceOffset) + fraction)
    }

    static func isLeap(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 in the proleptic Gregorian calendar.
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

// MARK: - Parser

/// A parsed node with how deep it is and the column where it starts.
private struct Parsed {
    var node: QueryNode
    var depth: Int
    var column: Int
}

private final class Parser {
    let text: String
    let characters: [Character]
    let tokens: [Token]
    var index = 0
    /// Open parentheses, quantifiers and `count(`s.
    var nesting = 0
    /// Quantifier bodies being parsed, in which `$` names the element.
    var quantifiers = 0
    /// Every path written in the text so far, in order, with its column (`QuerySource`).
    var paths: [QuerySource.Path] = []

    init(_ text: String) throws(QueryParseError) {
        self.text = text
        characters = Array(text)
        var lexer = Lexer(text, characters)
        tokens = try lexer.tokenize()
    }

    // MARK: Token helpers

    var current: Token { tokens[index] }

    func peek() -> Token { tokens[min(index + 1, tokens.count - 1)] }

    @discardableResult
    func advance() -> Token {
        let token = tokens[index]
        if index < tokens.count - 1 { index += 1 }
        return token
    }

    func source(from start: Int, through end: Token) -> String {
        let lower = min(max(start - 1, 0), characters.count)
        let upper = min(max(end.column - 1 + end.length, lower), characters.count)
        return String(characters[lower..<upper])
    }

    func source(_ token: Token) -> String { source(from: token.column, through: token) }

    /// The token quoted for a message: `'x'`.
    func quoted(_ token: Token) -> String { "'\(excerpt(source(token)))'" }

    /// How a message names the token something should follow: keywords bare, the rest quoted.
    func describe(_ token: Token) -> String { token.keyword?.rawValue ?? quoted(token) }

    func isAnd(_ token: Token) -> Bool { token.keyword == .and || symbol(token) == .and }

    func isOr(_ token: Token) -> Bool { token.keyword == .or || symbol(token) == .or }

    func isNot(_ token: Token) -> Bool { token.keyword == .not || symbol(token) == .bang }

    func symbol(_ token: Token) -> Symbol? {
        guard case .symbol(let symbol) = token.kind else { return nil }
        return symbol
    }

    /// A name usable as a field or entity: not a bare keyword.
    func isName(_ token: Token) -> Bool {
        guard case .name = token.kind else { return false }
        return token.keyword == nil
    }

    func comparison(_ token: Token) -> QueryComparison? {
        switch symbol(token) {
        case .equal: .equal
        case .notEqual: .notEqual
        case .less: .less
        case .lessOrEqual: .lessOrEqual
        case .greater: .greater
        case .greaterOrEqual: .greaterOrEqual
        default: nil
        }
    }

    func stringTest(_ token: Token) -> QueryStringTest? {
        switch token.keyword {
        case .contains: .contains
        case .beginswith: .beginsWith
        case .endswith: .endsWith
        case .like: .like
        default: nil
        }
    }

    func canStartValue(_ token: Token) -> Bool {
        switch token.kind {
        case .integer, .decimal, .string, .date, .uuid, .dollar: return true
        case .name:
            switch token.keyword {
            case nil, .true, .false, .nil, .null: return true
            default: return false
            }
        case .symbol(let symbol): return symbol == .leftParen || symbol == .minus
        case .end: return false
        }
    }

    func canStartCondition(_ token: Token) -> Bool {
        canStartValue(token) || isNot(token) || token.keyword == .any || token.keyword == .all
    }

    func failure(_ message: String, at column: Int) -> QueryParseError {
        QueryParseError(message: message, column: column, text: text)
    }

    func expected(_ what: String, after: String?, at token: Token) -> QueryParseError {
        failure("expected \(what)" + (after.map { " after \($0)" } ?? ""), at: token.column)
    }

    func enter(_ token: Token) throws(QueryParseError) {
        nesting += 1
        guard nesting <= maximumNesting else { throw failure("the query is nested too deeply", at: token.column) }
    }

    /// `node` built from `parts`, starting at `column`; too deep, an error at `at` (or `column`).
    func make(_ node: QueryNode, _ parts: [Parsed], column: Int, at: Int? = nil) throws(QueryParseError) -> Parsed {
        let depth = 1 + (parts.map(\.depth).max() ?? 0)
        guard depth <= maximumDepth else {
            throw failure("the query is nested too deeply", at: at ?? column)
        }
        return Parsed(node: node, depth: depth, column: column)
    }

    func expectEnd(after what: String) throws(QueryParseError) {
        let token = current
        switch token.kind {
        case .end: return
        case .symbol(.rightParen): throw failure("unexpected ')'", at: token.column)
        default: throw failure("unexpected \(quoted(token)) after \(what)", at: token.column)
        }
    }

    // MARK: Query

    func parseQuery() throws(QueryParseError) -> Query {
        guard isName(current), case .name(let entity, _) = current.kind else {
            throw failure("expected an entity name", at: current.column)
        }
        advance()
        var query = Query(entity: entity)
        if current.keyword == .where {
            advance()
            query.predicate = try parseCondition(after: "where").node
        }
        var sorted = false
        clauses: while true {
            let token = current
            switch token.keyword {
            case .sort:
                guard !sorted else { throw failure("'sort by' given twice", at: token.column) }
                sorted = true
                advance()
                query.sort = try parseSortKeys()
            case .limit:
                guard query.limit == nil else { throw failure("'limit' given twice", at: token.column) }
                advance()
                query.limit = try parseWholeNumber(after: "limit")
            case .offset:
                guard query.offset == nil else { throw failure("'offset' given twice", at: token.column) }
                advance()
                query.offset = try parseWholeNumber(after: "offset")
            case .where:
                let message =
                    query.predicate == nil ? "'where' must come right after the entity name" : "'where' given twice"
                throw failure(message, at: token.column)
            default:
                break clauses
            }
        }
        try expectEnd(after: "the query")
        query.source = QuerySource(text: text, paths: paths)
        return query
    }

    func parseSortKeys() throws(QueryParseError) -> [QuerySortKey] {
        guard current.keyword == .by else { throw expected("'by'", after: "sort", at: current) }
        advance()
        var keys: [QuerySortKey] = []
        var after = "sort by"
        while true {
            guard isName(current) else { throw expected("a field name", after: after, at: current) }
            var key = QuerySortKey(path: try parseFieldPath())
            if current.keyword == .asc {
                advance()
            } else if current.keyword == .desc {
                key.ascending = false
                advance()
            }
            keys.append(key)
            guard symbol(current) == .comma else { return keys }
            after = quoted(advance())
        }
    }

    func parseWholeNumber(after word: String) throws(QueryParseError) -> Int {
        let token = current
        switch token.kind {
        case .integer(let digits):
            guard let value = Int(digits) else {
                throw failure("\(word) \(excerpt(digits)) is too large", at: token.column)
            }
            advance()
            return value
        case .decimal:
            throw expected("a whole number", after: word, at: token)
        case .symbol(.minus):
            switch peek().kind {
            case .integer, .decimal: throw failure("\(word) must not be negative", at: token.column)
            default: throw expected("a number", after: word, at: token)
            }
        default:
            throw expected("a number", after: word, at: token)
        }
    }

    // MARK: Conditions
    //
    // The functions on the way into a parenthesis (`parseLogical`, `parseNegation`, `parseTest`,
    // `parseValue`, `parseOperand`, `parsePrimary`) loop rather than recurse where they can and
    // keep their frames small, so the stack a query needs stays small: parentheses, quantifiers
    // and `count(` are the only recursion, and `maximumNesting` bounds it.

    /// A predicate: a value used as a condition must be a test, a boolean or a path.
    func parseCondition(after: String?) throws(QueryParseError) -> Parsed {
        try condition(try parseLogical(after: after))
    }

    /// Checks that `parsed` can stand as a condition; a bare path becomes `path == true`.
    func condition(_ parsed: Parsed) throws(QueryParseError) -> Parsed {
        switch parsed.node {
        case .field, .element:
            return try make(.compare(.equal, parsed.node, .literal(.bool(true))), [parsed], column: parsed.column)
        case .literal(.bool), .compare, .and, .or, .not, .string, .isIn, .between, .any, .all, .coalesce,
            .conditional:
            return parsed
        case .literal, .count, .arithmetic, .negate:
            throw failure(
                "expected a condition, such as a comparison, a test or a boolean field", at: parsed.column)
        }
    }

    /// Conditions joined by `and` / `or` (`and` binding tighter). A single operand is returned as
    /// it is: inside parentheses it may be a value, as in `(a + 1) * 2`.
    func parseLogical(after: String?) throws(QueryParseError) -> Parsed {
        var alternatives: [Parsed] = []
        var conjuncts = [try parseNegation(after: after)]
        while true {
            let token = current
            let isAnd = isAnd(token)
            guard isAnd || isOr(token) else { break }
            advance()
            let next = try parseNegation(after: describe(token))
            if isAnd {
                conjuncts.append(next)
            } else {
                alternatives.append(try join(conjuncts, or: false))
                conjuncts = [next]
            }
        }
        guard !alternatives.isEmpty else { return try join(conjuncts, or: false) }
        alternatives.append(try join(conjuncts, or: false))
        return try join(alternatives, or: true)
    }

    /// `.and` / `.or` of the operands as conditions; a single operand as it is.
    func join(_ operands: [Parsed], or: Bool) throws(QueryParseError) -> Parsed {
        guard operands.count > 1 else { return operands[0] }
        var conditions: [Parsed] = []
        for operand in operands { conditions.append(try condition(operand)) }
        let nodes = conditions.map(\.node)
        return try make(or ? .or(nodes) : .and(nodes), conditions, column: operands[0].column)
    }

    /// `not`s (or `!`s), then a quantifier or a value with its optional test.
    func parseNegation(after: String?) throws(QueryParseError) -> Parsed {
        var negations: [Token] = []
        var after = after
        while isNot(current) {
            let token = advance()
            negations.append(token)
            after = describe(token)
        }
        guard canStartCondition(current) else { throw expected("a condition", after: after, at: current) }
        var result: Parsed
        if current.keyword == .any || current.keyword == .all {
            result = try parseQuantifier()
        } else {
            let value = try parseValue(after: after)
            result = try parseTest(of: value) ?? value
        }
        for token in negations.reversed() {
            let operand = try condition(result)
            result = try make(.not(operand.node), [operand], column: token.column)
        }
        return result
    }

    /// The test after a left operand: a comparison, `in`, `between` or a string test, each but the
    /// comparisons optionally preceded by `not`. Nil when no test follows.
    func parseTest(of subject: Parsed) throws(QueryParseError) -> Parsed? {
        if let comparison = comparison(current) {
            return try parseComparison(comparison, subject)
        }
        let negated = current.keyword == .not
        if negated {
            try checkNegatedTest()
            advance()
        }
        let test: Parsed
        if current.keyword == .in {
            test = try parseIn(subject)
        } else if current.keyword == .between {
            test = try parseBetween(subject)
        } else if let kind = stringTest(current) {
            test = try parseStringTest(kind, subject)
        } else {
            return nil
        }
        return negated ? try make(.not(test.node), [test], column: subject.column) : test
    }

    func checkNegatedTest() throws(QueryParseError) {
        let next = peek()
        guard next.keyword == .in || next.keyword == .between || stringTest(next) != nil else {
            throw expected("in, between, contains, beginswith, endswith or like", after: "not", at: next)
        }
    }

    func parseComparison(_ comparison: QueryComparison, _ subject: Parsed) throws(QueryParseError) -> Parsed {
        let token = advance()
        let other = try parseValue(after: quoted(token))
        if self.comparison(current) != nil {
            throw failure("comparisons cannot be chained; join them with and", at: current.column)
        }
        return try make(.compare(comparison, subject.node, other.node), [subject, other], column: subject.column)
    }

    func parseIn(_ subject: Parsed) throws(QueryParseError) -> Parsed {
        advance()
        guard symbol(current) == .leftBracket else { throw expected("'['", after: "in", at: current) }
        var after = quoted(advance())
        var candidates: [Parsed] = []
        if symbol(current) == .rightBracket {
            advance()
        } else {
            while true {
                candidates.append(try parseValue(after: after))
                if symbol(current) == .comma {
                    after = quoted(advance())
                    continue
                }
                guard symbol(current) == .rightBracket else {
                    throw failure("expected ']' to close the list", at: current.column)
                }
                advance()
                break
            }
        }
        return try make(
            .isIn(subject.node, candidates.map(\.node)), [subject] + candidates, column: subject.column)
    }

    func parseBetween(_ subject: Parsed) throws(QueryParseError) -> Parsed {
        advance()
        let lower = try parseValue(after: "between")
        guard isAnd(current) else {
            throw expected("'and'", after: "the lower bound of between", at: current)
        }
        let and = advance()
        let upper = try parseValue(after: describe(and))
        return try make(
            .between(subject.node, lower: lower.node, upper: upper.node), [subject, lower, upper],
            column: subject.column)
    }

    func parseStringTest(_ kind: QueryStringTest, _ subject: Parsed) throws(QueryParseError) -> Parsed {
        let word = advance().keyword?.rawValue ?? kind.rawValue
        var options: QueryStringOptions = []
        if symbol(current) == .leftBracket {
            options = try parseOptions(of: word)
        }
        let pattern = try parseValue(after: word)
        return try make(.string(kind, subject.node, pattern.node, options), [subject, pattern], column: subject.column)
    }

    /// `[c]`, `[d]`, `[cd]` or `[dc]` after a string test.
    func parseOptions(of word: String) throws(QueryParseError) -> QueryStringOptions {
        let open = advance()
        if case .name(let letters, quoted: false) = current.kind, symbol(peek()) == .rightBracket {
            let options: QueryStringOptions? =
                switch letters.lowercased() {
                case "c": .caseInsensitive
                case "d": .diacriticInsensitive
                case "cd", "dc": [.caseInsensitive, .diacriticInsensitive]
                default: nil
                }
            if let options {
                advance()
                advance()
                return options
            }
        }
        var close = index
        while symbol(tokens[close]) != .rightBracket, close < tokens.count - 1 { close += 1 }
        guard symbol(tokens[close]) == .rightBracket else {
            var at = current
            if case .name = at.kind { at = peek() }
            throw failure("expected ']' to close the options of \(word)", at: at.column)
        }
        let written = excerpt(source(from: open.column, through: tokens[close]))
        throw failure(
            "unknown option '\(written)' after \(word); expected [c], [d] or [cd]", at: open.column)
    }

    /// `any <path> <test>`, `all <path> <test>`, or either with a body in parentheses.
    func parseQuantifier() throws(QueryParseError) -> Parsed {
        let token = advance()
        let subject = try parseQuantifierSubject(after: token)
        try enter(token)
        quantifiers += 1
        defer {
            nesting -= 1
            quantifiers -= 1
        }
        let body: Parsed
        if symbol(current) == .leftParen {
            let open = advance()
            body = try parseCondition(after: quoted(open))
            try expectClosing(open)
            advance()
        } else {
            let element = Parsed(node: .element([]), depth: 1, column: current.column)
            guard let test = try parseTest(of: element) else { throw missingQuantifierTest(from: token) }
            body = test
        }
        let node: QueryNode =
            token.keyword == .all ? .all(subject.node, body: body.node) : .any(subject.node, body: body.node)
        return try make(node, [subject, body], column: token.column)
    }

    /// The collection of a quantifier: a path, or `$`/`$.path` inside an outer quantifier.
    func parseQuantifierSubject(after token: Token) throws(QueryParseError) -> Parsed {
        let start = current
        if isName(start) {
            return Parsed(node: .field(try parseFieldPath()), depth: 1, column: start.column)
        }
        if case .dollar = start.kind, quantifiers > 0 {
            return try parseElementPath()
        }
        throw expected("a field name", after: describe(token), at: start)
    }

    func missingQuantifierTest(from token: Token) -> QueryParseError {
        let written = excerpt(source(from: token.column, through: tokens[max(index - 1, 0)]))
        return expected("a comparison or a test", after: "'\(written)'", at: current)
    }

    func expectClosing(_ open: Token) throws(QueryParseError) {
        guard symbol(current) == .rightParen else {
            throw failure("expected ')' to close the '(' at column \(open.column)", at: current.column)
        }
    }

    // MARK: Values

    /// A value: operands joined by `??` (loosest, right-associative), `+ -`, then `* / %`.
    func parseValue(after: String?) throws(QueryParseError) -> Parsed {
        var operands = [try parseOperand(after: after)]
        var operators: [(token: Token, operation: BinaryOperation)] = []
        while let operation = binaryOperation(current) {
            let token = advance()
            while let top = operators.last, top.operation.reducesBefore(operation) {
                try reduce(&operands, &operators)
            }
            operators.append((token, operation))
            operands.append(try parseOperand(after: quoted(token)))
        }
        while !operators.isEmpty {
            try reduce(&operands, &operators)
        }
        return operands[0]
    }

    func binaryOperation(_ token: Token) -> BinaryOperation? {
        switch symbol(token) {
        case .coalesce: .coalesce
        case .plus: .arithmetic(.add)
        case .minus: .arithmetic(.subtract)
        case .star: .arithmetic(.multiply)
        case .slash: .arithmetic(.divide)
        case .percent: .arithmetic(.remainder)
        default: nil
        }
    }

    /// Replaces the last two operands by the last operator applied to them.
    func reduce(
        _ operands: inout [Parsed], _ operators: inout [(token: Token, operation: BinaryOperation)]
    ) throws(QueryParseError) {
        guard let (token, operation) = operators.popLast(), operands.count >= 2 else { return }
        let rhs = operands.removeLast()
        let lhs = operands.removeLast()
        let node: QueryNode =
            switch operation {
            case .coalesce: .coalesce(lhs.node, rhs.node)
            case .arithmetic(let arithmetic): .arithmetic(arithmetic, lhs.node, rhs.node)
            }
        operands.append(try make(node, [lhs, rhs], column: lhs.column, at: token.column))
    }

    /// Unary minuses, then a primary. A minus right before a number literal joins the literal.
    func parseOperand(after: String?) throws(QueryParseError) -> Parsed {
        var minuses: [Token] = []
        var after = after
        while symbol(current) == .minus {
            let token = advance()
            minuses.append(token)
            after = quoted(token)
        }
        guard canStartValue(current) else { throw expected("a value", after: after, at: current) }
        var result: Parsed
        if let minus = minuses.last, let folded = try negativeNumber(at: minus) {
            minuses.removeLast()
            result = folded
        } else {
            result = try parsePrimary(after: after)
        }
        for token in minuses.reversed() {
            result = try make(.negate(result.node), [result], column: token.column)
        }
        return result
    }

    /// The number literal at the current token made negative, or nil when there is none.
    func negativeNumber(at minus: Token) throws(QueryParseError) -> Parsed? {
        let value: RecordValue
        switch current.kind {
        case .integer(let digits): value = try integer("-" + digits, at: minus)
        case .decimal(let digits): value = try decimal("-" + digits, at: minus)
        default: return nil
        }
        advance()
        return literal(value, at: minus)
    }

    func parsePrimary(after: String?) throws(QueryParseError) -> Parsed {
        switch current.kind {
        case .symbol(.leftParen):
            return try parseParenthesized()
        case .dollar:
            return try parseElementPath()
        case .name(let name, quoted: false) where name.lowercased() == "count" && symbol(peek()) == .leftParen:
            return try parseCount()
        default:
            return try parseLeaf(after: after)
        }
    }

    func parseParenthesized() throws(QueryParseError) -> Parsed {
        let open = advance()
        try enter(open)
        defer { nesting -= 1 }
        let inner = try parseLogical(after: quoted(open))
        try expectClosing(open)
        advance()
        return Parsed(node: inner.node, depth: inner.depth, column: open.column)
    }

    func parseCount() throws(QueryParseError) -> Parsed {
        let token = advance()
        let open = advance()
        try enter(token)
        defer { nesting -= 1 }
        let operand = try parseValue(after: quoted(open))
        guard symbol(current) == .rightParen else {
            throw failure("expected ')' to close count(", at: current.column)
        }
        advance()
        return try make(.count(operand.node), [operand], column: token.column)
    }

    /// `$` or `$.path`: the element of the innermost quantifier.
    func parseElementPath() throws(QueryParseError) -> Parsed {
        let token = current
        guard quantifiers > 0 else {
            throw failure("'$' names the element of any or all, and is only valid in their body", at: token.column)
        }
        advance()
        var path: [String] = []
        while symbol(current) == .dot {
            path.append(try parsePathComponent())
        }
        if !path.isEmpty { paths.append(QuerySource.Path(path: path, isElement: true, column: token.column)) }
        return Parsed(node: .element(path), depth: 1, column: token.column)
    }

    /// Literals and paths.
    func parseLeaf(after: String?) throws(QueryParseError) -> Parsed {
        let token = current
        let value: RecordValue
        switch token.kind {
        case .integer(let digits): value = try integer(digits, at: token)
        case .decimal(let digits): value = try decimal(digits, at: token)
        case .string(let text): value = .string(text)
        case .date(let date): value = .date(date)
        case .uuid(let uuid): value = .uuid(uuid)
        case .name:
            switch token.keyword {
            case .true: value = .bool(true)
            case .false: value = .bool(false)
            case .nil, .null: value = .null
            case nil: return Parsed(node: .field(try parseFieldPath()), depth: 1, column: token.column)
            default: throw expected("a value", after: after, at: token)
            }
        default:
            throw expected("a value", after: after, at: token)
        }
        advance()
        return literal(value, at: token)
    }

    /// A path read from the record, listed with its column in `paths`.
    func parseFieldPath() throws(QueryParseError) -> [String] {
        let column = current.column
        let path = try parsePath()
        paths.append(QuerySource.Path(path: path, isElement: false, column: column))
        return path
    }

    /// `name(.name)*`; the first name is not a bare keyword (the caller checked).
    func parsePath() throws(QueryParseError) -> [String] {
        guard case .name(let first, _) = current.kind else { throw expected("a field name", after: nil, at: current) }
        advance()
        var path = [first]
        while symbol(current) == .dot {
            path.append(try parsePathComponent())
        }
        return path
    }

    /// `.name` after a path; after a dot a keyword is a plain name.
    func parsePathComponent() throws(QueryParseError) -> String {
        let dot = advance()
        guard case .name(let component, _) = current.kind else {
            throw expected("a field name", after: quoted(dot), at: current)
        }
        advance()
        return component
    }

    func literal(_ value: RecordValue, at token: Token) -> Parsed {
        Parsed(node: .literal(value), depth: 1, column: token.column)
    }

    /// An integer literal; too big for `Int64`, a Double.
    func integer(_ digits: String, at token: Token) throws(QueryParseError) -> RecordValue {
        if let value = Int64(digits) { return .int(value) }
        return try decimal(digits, at: token)
    }

    func decimal(_ digits: String, at token: Token) throws(QueryParseError) -> RecordValue {
        guard let value = Double(digits), value.isFinite else {
            throw failure("the number \(excerpt(digits)) is out of range", at: token.column)
        }
        return .double(value)
    }
}
