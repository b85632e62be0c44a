import Foundation

/// A strict JSON (RFC 8259) reader producing schema-less values: what the CLI and the daemon take
/// in. Integers become `.int` (`.uint` past `Int64.max`); other numbers `.decimal` with their
/// text as given, so that no digit is lost before the kind of the field they go to is known
/// (`RecordShape.conform` makes them the stored kind: a Double, a Float, a Decimal, a Date).
/// Objects keep their keys in order (a repeated key is an error). Depth is bounded, so hostile
/// input cannot exhaust the stack.
package struct JSONReader {
    /// Why some text is not JSON, with the 1-based line and column.
    package struct Error: Swift.Error, CustomStringConvertible, Sendable {
        package var line: Int
        package var column: Int
        package var message: String
        package var description: String { "invalid JSON at line \(line), column \(column): \(message)" }
    }

    private let bytes: [UInt8]
    private var position = 0
    private let maximumDepth: Int

    /// Parses `text`, which must hold exactly one JSON value (whitespace around it allowed).
    package static func parse(_ text: some Collection<UInt8>, maximumDepth: Int = 64) throws(Error) -> RecordValue {
        var reader = JSONReader(bytes: Array(text), maximumDepth: maximumDepth)
        reader.skipWhitespace()
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.position == reader.bytes.count else { throw reader.error("unexpected text after the value") }
        return value
    }

    /// Parses `text` as NDJSON: one value per non-blank line; errors name the line.
    package static func parseLines(_ text: some Collection<UInt8>) throws(Error) -> [RecordValue] {
        try parseNumberedLines(text).map(\.value)
    }

    /// Parses `text` as NDJSON, each value with the 1-based number of its line (blank lines are skipped but
    /// counted), so that a later error about a value can name its line; errors name the line.
    package static func parseNumberedLines(
        _ text: some Collection<UInt8>
    ) throws(Error) -> [(number: Int, value: RecordValue)] {
        var values: [(number: Int, value: RecordValue)] = []
        var lineNumber = 0
        for line in Array(text).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            guard line.contains(where: { !isWhitespace($0) }) else { continue }
            do {
                values.append((lineNumber, try parse(line)))
            } catch {
                throw Error(line: lineNumber, column: error.column, message: error.message)
            }
        }
        return values
    }

    private init(bytes: [UInt8], maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    private func error(_ message: String, at offset: Int? = nil) -> Error {
        let end = min(offset ?? position, bytes.count)
        var line = 1
        var lineStart = 0
        for index in 0..<end where bytes[index] == UInt8(ascii: "\n") {
            line += 1
            lineStart = index + 1
        }
        // Columns count characters, not bytes.
        let column = String(decoding: bytes[lineStart..<end], as: UTF8.self).count + 1
        return Error(line: line, column: column, message: message)
    }

    private mutating func skipWhitespace() {
        while position < bytes.count, Self.isWhitespace(bytes[position]) { position += 1 }
    }

    private var describeNext: String {
        guard position < bytes.count else { return "the end of the text" }
        let scalar = String(decoding: bytes[position..<min(position + 4, bytes.count)], as: UTF8.self).first
        return scalar.map { "'\($0)'" } ?? "byte \(bytes[position])"
    }

    private mutating func value(depth: Int) throws(Error) -> RecordValue {
        guard depth <= maximumDepth else { throw error("nested deeper than \(maximumDepth) levels") }
        guard position < bytes.count else { throw error("expected a value, found the end of the text") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw error("expected a value, found \(describeNext)")
        }
    }

    private mutating func literal(_ word: String, _ value: RecordValue) throws(Error) -> RecordValue {
        let expected = Array(word.utf8)
        guard bytes.count - position >= expected.count, Array(bytes[position..<position + expected.count]) == expected
        else { throw error("expected a value, found \(describeNext)") }
        position += expected.count
        return value
    }

    private mutating func object(depth: Int) throws(Error) -> RecordValue {
        position += 1
        var fields: [RecordField] = []
        var seen: Set<String> = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return .map(fields)
        }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                throw error("expected a string key, found \(describeNext)")
            }
            let keyStart = position
            let key = try string()
            guard seen.insert(key).inserted else { throw error("the key \"\(key)\" appears twice", at: keyStart) }
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
                throw error("expected ':' after a key, found \(describeNext)")
            }
            position += 1
            skipWhitespace()
            fields.append(RecordField(name: key, value: try value(depth: depth + 1)))
            skipWhitespace()
            guard position < bytes.count else { throw error("expected ',' or '}', found the end of the text") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            guard bytes[position] == UInt8(ascii: "}") else {
                throw error("expected ',' or '}', found \(describeNext)")
            }
            position += 1
            return .map(fields)
        }
    }

    private mutating func array(depth: Int) throws(Error) -> RecordValue {
        position += 1
        var elements: [RecordValue] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try value(depth: depth + 1))
            skipWhitespace()
            guard position < bytes.count else { throw error("expected ',' or ']', found the end of the text") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            guard bytes[position] == UInt8(ascii: "]") else {
                throw error("expected ',' or ']', found \(describeNext)")
            }
            position += 1
            return .array(elements)
        }
    }

    private mutating func string() throws(Error) -> String {
        let start = position
        position += 1
        var output: [UInt8] = []
        while true {
            guard position < bytes.count else { throw error("a string is not closed", at: start) }
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                guard let text = String(validating: output, as: UTF8.self) else {
                    throw error("a string is not valid UTF-8", at: start)
                }
                return text
            case UInt8(ascii: "\\"):
                position += 1
                guard position < bytes.count else { throw error("a string is not closed", at: start) }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""): output.append(0x22)
                case UInt8(ascii: "\\"): output.append(0x5C)
                case UInt8(ascii: "/"): output.append(0x2F)
                case UInt8(ascii: "b"): output.append(0x08)
                case UInt8(ascii: "f"): output.append(0x0C)
                case UInt8(ascii: "n"): output.append(0x0A)
                case UInt8(ascii: "r"): output.append(0x0D)
                case UInt8(ascii: "t"): output.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        // A surrogate pair: the low half must follow.
                        guard bytes.count - position >= 6, bytes[position] == UInt8(ascii: "\\"),
                            bytes[position + 1] == UInt8(ascii: "u")
                        else { throw error("a lone surrogate in \\u escape") }
                        position += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("a lone surrogate in \\u escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw error("a lone surrogate in \\u escape") }
                    output.append(contentsOf: Array(String(Character(unicode)).utf8))
                default:
                    throw error("an unknown escape '\\\(Character(Unicode.Scalar(escape)))'", at: position - 2)
                }
            case 0x00..<0x20:
                throw error("a control character in a string (escape it)")
            default:
                output.append(byte)
                position += 1
            }
        }
    }

    private mutating func hex4() throws(Error) -> UInt32 {
        guard bytes.count - position >= 4 else { throw error("\\u needs four hexadecimal digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("\\u needs four hexadecimal digits")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    private mutating func number() throws(Error) -> RecordValue {
        let start = position
        func digits() -> Int {
            let from = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                position += 1
            }
            return position - from
        }
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        let integerStart = position
        let integerDigits = digits()
        guard integerDigits > 0 else { throw error("a number needs digits", at: start) }
        guard integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else {
            throw error("a number cannot start with 0", at: start)
        }
        var isInteger = true
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            isInteger = false
            guard digits() > 0 else { throw error("a number needs digits after '.'", at: start) }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            isInteger = false
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard digits() > 0 else { throw error("a number needs digits in its exponent", at: start) }
        }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        if isInteger {
            if let value = Int64(text) { return .int(value) }
            if let value = UInt64(text) { return .uint(value) }
        }
        return .decimal(text)
    }
}
