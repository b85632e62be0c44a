import Foundation

/// Splits a query's text into tokens, each with its column.
struct QueryLexer {
    let text: String
    /// The text's characters; empty for plain ASCII text, whose characters are its bytes (see
    /// `character(_:)`).
    let characters: [Character]
    /// Each character's ASCII value, or `nonASCII`: the hot tests read these bytes.
    let ascii: [UInt8]
    static let nonASCII: UInt8 = 0xFF
    var position = 0
    var tokens: [QueryToken] = []

    /// A lexer of `text`: of `plainASCII`, the text's bytes when each is a character of its own
    /// (see `QueryText.plainASCII`), else of `characters`, the text's characters.
    init(_ text: String, _ characters: [Character], plainASCII: [UInt8]? = nil) {
        self.text = text
        if let plainASCII {
            self.characters = []
            ascii = plainASCII
        } else {
            self.characters = characters
            ascii = characters.map { $0.asciiValue ?? Self.nonASCII }
        }
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

    /// The ASCII value of the character at `index`; `nonASCII` for any other, and past the end.
    /// (No ASCII character compares equal to `nonASCII`, so a test for one reads this byte.)
    func byte(_ index: Int) -> UInt8 { index < ascii.count ? ascii[index] : Self.nonASCII }

    /// The characters `start..<end` as a string.
    func string(_ start: Int, _ end: Int) -> String {
        // Plain ASCII text (no characters kept) has no byte to look for.
        if !characters.isEmpty && ascii[start..<end].contains(Self.nonASCII) { return String(characters[start..<end]) }
        // Decoded from contiguous bytes: from an `ArraySlice` the generic path was taken, about
        // 180 instructions a name.
        return ascii.withUnsafeBufferPointer {
            String(decoding: UnsafeBufferPointer(rebasing: $0[start..<end]), as: UTF8.self)
        }
    }

    func failure(_ message: String, at index: Int) -> QueryParseError {
        QueryParseError(message: message, column: index + 1, text: text)
    }

    func character(_ index: Int) -> Character? {
        guard index < ascii.count else { return nil }
        // Plain ASCII text keeps no characters: each is its byte.
        return characters.isEmpty ? Character(Unicode.Scalar(ascii[index])) : characters[index]
    }

    /// Adds a token of `kind`, from `start` to the current position, that spells no keyword.
    mutating func emit(_ kind: QueryToken.Kind, from start: Int) {
        tokens.append(QueryToken(kind: kind, keyword: nil, column: start + 1, length: position - start))
    }

    /// Adds the unquoted name from `start` to the current position, with the keyword it spells.
    mutating func emitName(from start: Int) {
        let name = string(start, position)
        // A name of ASCII characters is matched on its bytes; any other through `lowercased()`,
        // which may map a character that is not ASCII to one that is (the Kelvin sign to `k`).
        let bytes = ascii[start..<position]
        let keyword =
            !characters.isEmpty && bytes.contains(Self.nonASCII)
            ? QueryKeyword(rawValue: name.lowercased()) : QueryKeyword(asciiName: bytes)
        tokens.append(
            QueryToken(kind: .name(name, quoted: false), keyword: keyword, column: start + 1, length: position - start))
    }

    mutating func tokenize() throws(QueryParseError) -> [QueryToken] {
        // Each character is told apart by its ASCII byte; only a character that is not ASCII (a
        // letter, a space, a quote with a combining mark after it) is looked at as a `Character`.
        // Room for the tokens of a short query: growing the array a token at a time copies it
        // three or four times. A token is about one in five characters of a typical query, and at
        // most 24 (under 1 KiB) are asked for at first: glibc's allocator serves larger blocks
        // by a slower path, which reserving half the length (a query of 55 characters) took,
        // about 2,500 instructions a parse.
        tokens.reserveCapacity(min(ascii.count / 4 + 4, 24))
        while position < ascii.count {
            let byte = ascii[position]
            let isASCII = byte != Self.nonASCII
            if isASCII ? byte == 0x20 || (0x09...0x0D).contains(byte) : characters[position].isSpace {
                position += 1
                continue
            }
            let start = position
            if let uuid = uuid(at: start) {
                position += 36
                emit(.uuid(uuid), from: start)
            } else if looksLikeDate(at: start) {
                try lexDate()
            } else if isDigit(start) {
                try lexNumber()
            } else if isASCII ? Self.startsName(byte) : characters[start].startsName {
                while continuesName(position) { position += 1 }
                emitName(from: start)
            } else if byte == UInt8(ascii: "`") {
                try lexQuotedName()
            } else if isASCII
                ? byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")
                : characters[start].unicodeScalars.first.map({ $0 == "\"" || $0 == "'" }) ?? false
            {
                // A quote and the combining mark after it are one Character: the string starts
                // with the mark.
                try lexString()
            } else if byte == UInt8(ascii: "$") {
                position += 1
                emit(.dollar, from: start)
            } else {
                try lexSymbol()
            }
        }
        tokens.append(QueryToken(kind: .end, keyword: nil, column: ascii.count + 1, length: 0))
        return tokens
    }

    /// Whether an ASCII character starts a name: a letter or `_`.
    static func startsName(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x5F
    }

    /// A UUID in its 8-4-4-4-12 hex form, not running on into a name or number.
    func uuid(at start: Int) -> UUID? {
        guard start + 36 <= ascii.count else { return nil }
        for offset in 0..<36 {
            let byte = ascii[start + offset]
            switch offset {
            case 8, 13, 18, 23:
                guard byte == UInt8(ascii: "-") else { return nil }
            default:
                guard (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
                else { return nil }
            }
        }
        if let next = character(start + 36), next.continuesName || next == "-" { return nil }
        return UUIDText.uuid(string(start, start + 36))
    }

    /// `dddd-dd-d…`: the start of a date literal.
    func looksLikeDate(at start: Int) -> Bool {
        guard start + 9 <= ascii.count else { return false }
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
        let literal = (start..<position).map { character($0)! }
        guard let date = QueryDateLiteral.parse(literal) else {
            throw failure("invalid date '\(sourceExcerpt(String(literal)))'", at: start)
        }
        emit(.date(date), from: start)
    }

    mutating func lexNumber() throws(QueryParseError) {
        let start = position
        var isDecimal = false
        skipDigits()
        // Each test of a character on its ASCII byte (see `byte(_:)`).
        if byte(position) == UInt8(ascii: "."), isDigit(position + 1) {
            position += 1
            skipDigits()
            isDecimal = true
        }
        if byte(position) == UInt8(ascii: "e") || byte(position) == UInt8(ascii: "E") {
            var next = position + 1
            if byte(next) == UInt8(ascii: "+") || byte(next) == UInt8(ascii: "-") { next += 1 }
            if isDigit(next) {
                position = next
                skipDigits()
                isDecimal = true
            }
        }
        if continuesName(position) {
            while continuesName(position) { position += 1 }
            throw failure("invalid number '\(sourceExcerpt(string(start, position)))'", at: start)
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
        let name = string(start + 1, position)
        guard !name.isEmpty else { throw failure("empty backticked name", at: start) }
        position += 1
        emit(.name(name, quoted: true), from: start)
    }

    mutating func lexString() throws(QueryParseError) {
        let start = position
        let opening = character(start)!.unicodeScalars
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
        let hex = string(start + 3, end)
        guard character(end) == "}" else {
            throw failure("expected '}' to close the unicode escape \\u{\(sourceExcerpt(hex))", at: start)
        }
        end += 1
        guard (1...8).contains(hex.count), let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) else {
            throw failure("invalid unicode escape '\\u{\(sourceExcerpt(hex))}'", at: start)
        }
        position = end
        return scalar
    }

    mutating func lexSymbol() throws(QueryParseError) {
        let start = position
        // The characters as their ASCII bytes (`nonASCII` for any other, and past the end): a
        // symbol is one or two ASCII characters, and a `Character` is made only for a message.
        let first = ascii[start]
        let second = start + 1 < ascii.count ? ascii[start + 1] : Self.nonASCII
        let symbol: QuerySymbol
        var length = 1
        switch first {
        case UInt8(ascii: "="):
            symbol = .equal
            if second == UInt8(ascii: "=") { length = 2 }
        case UInt8(ascii: "!"):
            symbol = second == UInt8(ascii: "=") ? .notEqual : .bang
            if second == UInt8(ascii: "=") { length = 2 }
        case UInt8(ascii: "<"):
            switch second {
            case UInt8(ascii: "="): (symbol, length) = (.lessOrEqual, 2)
            case UInt8(ascii: ">"): (symbol, length) = (.notEqual, 2)
            default: symbol = .less
            }
        case UInt8(ascii: ">"):
            symbol = second == UInt8(ascii: "=") ? .greaterOrEqual : .greater
            if second == UInt8(ascii: "=") { length = 2 }
        case UInt8(ascii: "&") where second == UInt8(ascii: "&"): (symbol, length) = (.and, 2)
        case UInt8(ascii: "|") where second == UInt8(ascii: "|"): (symbol, length) = (.or, 2)
        case UInt8(ascii: "?") where second == UInt8(ascii: "?"): (symbol, length) = (.coalesce, 2)
        case UInt8(ascii: "+"): symbol = .plus
        case UInt8(ascii: "-"): symbol = .minus
        case UInt8(ascii: "*"): symbol = .star
        case UInt8(ascii: "/"): symbol = .slash
        case UInt8(ascii: "%"): symbol = .percent
        case UInt8(ascii: "("): symbol = .leftParen
        case UInt8(ascii: ")"): symbol = .rightParen
        case UInt8(ascii: "["): symbol = .leftBracket
        case UInt8(ascii: "]"): symbol = .rightBracket
        case UInt8(ascii: ","): symbol = .comma
        case UInt8(ascii: "."): symbol = .dot
        default:
            let hint: String =
                switch first {
                case UInt8(ascii: "&"): "; use '&&' or and"
                case UInt8(ascii: "|"): "; use '||' or or"
                case UInt8(ascii: "?"): "; only '??' is an operator"
                default: ""
                }
            throw failure("unexpected character '\(Self.visible(character(start)!))'\(hint)", at: start)
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
