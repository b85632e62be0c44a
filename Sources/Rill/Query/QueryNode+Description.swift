import Foundation

extension QueryNode: CustomStringConvertible {
    /// The node in the text query language, as `explain` shows it. Quantifier bodies that the
    /// language cannot say directly show the current element as `$`.
    ///
    /// A node that `QueryParser` made reads back as an equal node: a group that the parser keeps
    /// (an `and` inside an `and`, a minus before a parenthesized number) keeps its parentheses,
    /// dates keep every digit they need, and a string escapes what would otherwise join its quotes.
    package var description: String { render(precedence: 0) }

    private func render(precedence outer: Int) -> String {
        let (text, precedence): (String, Int)
        switch self {
        case .field(let path):
            (text, precedence) = (Self.path(path), 9)
        case .element(let path):
            (text, precedence) = (path.isEmpty ? "$" : "$." + Self.path(path), 9)
        case .literal(let value):
            (text, precedence) = (Self.literalText(value), 9)
        case .compare(let op, let lhs, let rhs):
            (text, precedence) = ("\(lhs.render(precedence: 5)) \(op.rawValue) \(rhs.render(precedence: 5))", 4)
        case .and(let operands):
            (text, precedence) = (
                operands.isEmpty ? "true" : operands.map { $0.render(precedence: 3) }.joined(separator: " and "), 2
            )
        case .or(let operands):
            (text, precedence) = (
                operands.isEmpty ? "false" : operands.map { $0.render(precedence: 2) }.joined(separator: " or "), 1
            )
        case .not(let operand):
            (text, precedence) = ("not \(operand.render(precedence: 3))", 3)
        case .string(let test, let lhs, let rhs, let options):
            var flags = ""
            if options.contains(.caseInsensitive) { flags += "c" }
            if options.contains(.diacriticInsensitive) { flags += "d" }
            let name = test.rawValue + (flags.isEmpty ? "" : "[\(flags)]")
            (text, precedence) = ("\(lhs.render(precedence: 5)) \(name) \(rhs.render(precedence: 5))", 4)
        case .isIn(let operand, let candidates):
            let list = candidates.map { $0.render(precedence: 5) }.joined(separator: ", ")
            (text, precedence) = ("\(operand.render(precedence: 5)) in [\(list)]", 4)
        case .between(let operand, let lower, let upper):
            (text, precedence) = (
                "\(operand.render(precedence: 5)) between \(lower.render(precedence: 5)) and \(upper.render(precedence: 5))",
                4
            )
        case .any(let collection, let body), .all(let collection, let body):
            let word = if case .any = self { "any" } else { "all" }
            let subject = collection.render(precedence: 9)
            // The language's own form, `any tags == "x"`, when the body tests the element itself.
            let rendered = body.render(precedence: 4)
            if body.testsElementItself, rendered.hasPrefix("$ ") {
                (text, precedence) = ("\(word) \(subject) \(rendered.dropFirst(2))", 4)
            } else {
                (text, precedence) = ("\(word) \(subject) (\(body.render(precedence: 0)))", 4)
            }
        case .count(let operand):
            (text, precedence) = ("count(\(operand.render(precedence: 5)))", 9)
        case .arithmetic(let op, let lhs, let rhs):
            let level = op == .add || op == .subtract ? 6 : 7
            (text, precedence) = (
                "\(lhs.render(precedence: level)) \(op.rawValue) \(rhs.render(precedence: level + 1))", level
            )
        case .negate(let operand):
            // A minus right before a number literal joins it: `-(5)` is not `-5`.
            let inner = operand.render(precedence: 8)
            let joins = inner.first.map { $0.isASCIIDigit } ?? false
            (text, precedence) = ("-" + (joins ? "(\(inner))" : inner), 8)
        case .coalesce(let operand, let fallback):
            (text, precedence) = ("\(operand.render(precedence: 6)) ?? \(fallback.render(precedence: 5))", 5)
        case .conditional(let condition, let then, let otherwise):
            (text, precedence) = (
                "\(condition.render(precedence: 1)) ? \(then.render(precedence: 1)) : \(otherwise.render(precedence: 1))",
                0
            )
        }
        return precedence < outer ? "(\(text))" : text
    }

    /// A comparison, string test, `in` or `between` whose subject is the quantifier's element.
    private var testsElementItself: Bool {
        switch self {
        case .compare(_, .element([]), let rhs), .string(_, .element([]), let rhs, _): !rhs.mentionsElement
        case .isIn(.element([]), let candidates): !candidates.contains { $0.mentionsElement }
        case .between(.element([]), let lower, let upper): !lower.mentionsElement && !upper.mentionsElement
        default: false
        }
    }

    private var mentionsElement: Bool {
        switch self {
        case .element: true
        case .field, .literal: false
        case .compare(_, let a, let b), .arithmetic(_, let a, let b), .coalesce(let a, let b),
            .string(_, let a, let b, _):
            a.mentionsElement || b.mentionsElement
        case .and(let list), .or(let list): list.contains { $0.mentionsElement }
        case .not(let a), .count(let a), .negate(let a): a.mentionsElement
        case .isIn(let a, let list): a.mentionsElement || list.contains { $0.mentionsElement }
        case .between(let a, let b, let c), .conditional(let a, let b, let c):
            a.mentionsElement || b.mentionsElement || c.mentionsElement
        case .any(let a, _), .all(let a, _): a.mentionsElement
        }
    }

    /// Words of the text query language that a field name must be quoted (in backticks) to use.
    private static let keywords: Set<String> = [
        "where", "and", "or", "not", "in", "between", "contains", "beginswith", "endswith", "like", "any", "all",
        "sort", "by", "asc", "desc", "limit", "offset", "nil", "null", "true", "false",
    ]

    static func path(_ components: [String]) -> String {
        components.map { component in
            let plain =
                component.first.map { $0.isLetter || $0 == "_" } == true
                && component.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
                && !keywords.contains(component.lowercased())
            return plain ? component : "`\(component)`"
        }.joined(separator: ".")
    }

    /// Whether `scalar` would join the character before or after it into one Character (a
    /// combining mark, a joiner, a prefix such as U+0600), so that written raw in a string it could
    /// swallow a quote or the backslash of an escape.
    private static func joinsNeighbours(_ scalar: Unicode.Scalar) -> Bool {
        var before = "a"
        before.unicodeScalars.append(scalar)
        var after = ""
        after.unicodeScalars.append(scalar)
        after += "a"
        return before.count == 1 || after.count == 1
    }

    static func literalText(_ value: RecordValue) -> String {
        switch value {
        case .null: return "nil"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .uint(let u): return String(u)
        case .float(let f): return "\(f)"
        case .double(let d): return "\(d)"
        case .decimal(let text): return text
        case .string(let s), .url(let s):
            var escaped = "\""
            for scalar in s.unicodeScalars {
                switch scalar {
                case "\"": escaped += "\\\""
                case "\\": escaped += "\\\\"
                case "\n": escaped += "\\n"
                case "\t": escaped += "\\t"
                case "\r": escaped += "\\r"
                case "\0": escaped += "\\0"
                default:
                    if scalar.isASCII || !joinsNeighbours(scalar) {
                        escaped.unicodeScalars.append(scalar)
                    } else {
                        escaped += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                    }
                }
            }
            return escaped + "\""
        case .date(let date):
            return ISO8601Time.string(date)
        case .uuid(let uuid): return uuid.uuidString
        case .data(let data): return "<\(data.count) bytes>"
        case .array(let items): return "[" + items.map(literalText).joined(separator: ", ") + "]"
        case .map: return "{…}"
        }
    }
}
