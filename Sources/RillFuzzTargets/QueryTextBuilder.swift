import Foundation
import Rill

/// Query text chosen by a fuzzing input along the language's grammar (Documentation/QueryLanguage.md):
/// every kind of value, test and clause, names that need backticks, strings with escapes and
/// combining marks, numbers at the edges of their kinds. Random bytes seldom make a long valid
/// query; these reach the parser's and the printer's every construct at once.
struct QueryTextBuilder {
    var input: FuzzInput
    /// Quantifier bodies open, in which `$` names the element.
    var quantifiers = 0

    static let names = [
        "a", "title", "pages", "address", "city", "_x9", "é", "Ünïcode", "limit", "where", "count", "sort", "x y",
        "a.b", "1st", "$", "null", "naïve", "e\u{301}", "ℵ",
    ]
    static let strings = [
        "", "harry", "a\"b", "back\\slash", "new\nline", "tab\t", "\r\n", "\0", "e\u{301}", "\u{301}lead",
        "tail\u{600}", "😀", "👩‍👩‍👧", "🇫🇷", "*?", "it's",
    ]

    init(_ input: FuzzInput) { self.input = input }

    mutating func query() -> String {
        var text = name()
        if input.bool() { text += " where " + condition(depth: 0) }
        var clauses: [String] = []
        if input.bool() {
            clauses.append(
                "sort by "
                    + (0...input.int(in: 0...2)).map { _ in
                        path() + input.pick(["", " asc", " desc", " ASC"])
                    }.joined(separator: ", "))
        }
        if input.bool() { clauses.append("limit \(input.int(in: 0...70000))") }
        if input.bool() { clauses.append("offset \(input.int(in: 0...70000))") }
        if input.bool() { clauses.reverse() }
        return ([text] + clauses).joined(separator: " ")
    }

    mutating func name() -> String {
        let name = input.pick(Self.names)
        let plain =
            name.first.map { $0.isLetter || $0 == "_" } == true
            && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
        return plain && !["limit", "where", "sort", "null"].contains(name) ? name : "`\(name)`"
    }

    mutating func path() -> String {
        (0...input.int(in: 0...2)).map { _ in name() }.joined(separator: ".")
    }

    mutating func condition(depth: Int) -> String {
        let deep = depth < 4
        switch input.int(in: 0...(deep ? 11 : 5)) {
        case 0:
            return value(depth: depth) + " " + input.pick(["==", "!=", "<", "<=", ">", ">=", "=", "<>"]) + " "
                + value(depth: depth)
        case 1: return path()
        case 2:
            return value(depth: depth) + (input.bool() ? " not" : "") + " in ["
                + (0..<input.int(in: 0...3)).map { _ in value(depth: depth) }.joined(separator: ", ") + "]"
        case 3:
            return value(depth: depth) + (input.bool() ? " not" : "") + " between " + value(depth: depth) + " and "
                + value(depth: depth)
        case 4:
            return value(depth: depth) + (input.bool() ? " not " : " ")
                + input.pick(["contains", "beginswith", "endswith", "like", "CONTAINS"])
                + input.pick(["", "[c]", "[d]", "[cd]", "[dc]"]) + " " + value(depth: depth)
        case 5: return input.pick(["true", "false"])
        case 6: return input.pick(["not ", "!", "NOT "]) + condition(depth: depth + 1)
        case 7, 8:
            let joiner = input.pick([" and ", " or ", " && ", " || ", " AND "])
            return condition(depth: depth + 1) + joiner + condition(depth: depth + 1)
        case 9: return "(" + condition(depth: depth + 1) + ")"
        default:
            let word = input.pick(["any", "all"])
            let subject = quantifiers > 0 && input.bool() ? "$" + (input.bool() ? "." + name() : "") : path()
            quantifiers += 1
            defer { quantifiers -= 1 }
            if input.bool() { return "\(word) \(subject) (\(condition(depth: depth + 1)))" }
            switch input.int(in: 0...2) {
            case 0: return "\(word) \(subject) == \(value(depth: depth + 1))"
            case 1: return "\(word) \(subject) in [\(value(depth: depth + 1))]"
            default: return "\(word) \(subject) contains[c] \(value(depth: depth + 1))"
            }
        }
    }

    mutating func value(depth: Int) -> String {
        let deep = depth < 4
        switch input.int(in: 0...(deep ? 14 : 8)) {
        case 0, 1: return path()
        case 2: return String(Int64(bitPattern: input.uint64()) >> input.int(in: 0...63))
        case 3:
            let double = Double(bitPattern: input.uint64())
            return double.isFinite ? "\(double)" : "1e308"
        case 4: return input.pick(["0.5", "-0.0", "1e3", "2E-5", "18446744073709551616", "-9223372036854775808"])
        case 5:
            return string(input.pick(Self.strings) + String(decoding: input.take(input.int(in: 0...4)), as: UTF8.self))
        case 6:
            let seconds = Double(Int64(bitPattern: input.uint64()) % 300_000_000_000) / 1000
            let date = Date(timeIntervalSince1970: seconds)
            return input.bool()
                ? ISO8601Time.string(date)
                : input.pick([
                    "2024-05-01", "2024-05-01T10:30Z", "2024-05-01T10:30:00+02:00", "2024-05-01T10:30:00.5+0200",
                ])
        case 7: return RecordValueBuilder.uuid(&input).uuidString
        case 8: return input.pick(["nil", "null", "true", "false"])
        case 9, 10:
            return value(depth: depth + 1) + input.pick([" + ", " - ", " * ", " / ", " % ", " ?? "])
                + value(depth: depth + 1)
        case 11: return "-" + value(depth: depth + 1)
        case 12: return "count(" + value(depth: depth + 1) + ")"
        case 13: return "(" + (input.bool() ? value(depth: depth + 1) : condition(depth: depth + 1)) + ")"
        default: return quantifiers > 0 ? "$" + (input.bool() ? "." + name() : "") : path()
        }
    }

    /// A string literal of `text`, each character written raw or escaped as the input chooses.
    mutating func string(_ text: String) -> String {
        let quote = input.bool() ? "\"" : "'"
        var literal = quote
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": literal += "\\\""
            case "'": literal += "\\'"
            case "\\": literal += "\\\\"
            case "\n": literal += input.bool() ? "\\n" : "\n"
            default:
                if input.int(in: 0...3) == 0 {
                    literal += "\\u{" + String(scalar.value, radix: 16) + "}"
                } else {
                    literal.unicodeScalars.append(scalar)
                }
            }
        }
        return literal + quote
    }
}
