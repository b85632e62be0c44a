import Foundation

// Values: operands, arithmetic, paths and literals.
extension QueryParserState {

    /// A value: operands joined by `??` (loosest, right-associative), `+ -`, then `* / %`.
    func parseValue(after: QueryParseAfter?) throws(QueryParseError) -> ParsedNode {
        let first = try parseOperand(after: after)
        // Most values are one operand: no stacks made for them.
        guard binaryOperation(current) != nil else { return first }
        var operands = [first]
        var operators: [(token: QueryToken, operation: QueryBinaryOperation)] = []
        while let operation = binaryOperation(current) {
            let token = advance()
            while let top = operators.last, top.operation.reducesBefore(operation) {
                try reduce(&operands, &operators)
            }
            operators.append((token, operation))
            operands.append(try parseOperand(after: .quoted(token)))
        }
        while !operators.isEmpty {
            try reduce(&operands, &operators)
        }
        return operands[0]
    }

    func binaryOperation(_ token: QueryToken) -> QueryBinaryOperation? {
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
        _ operands: inout [ParsedNode], _ operators: inout [(token: QueryToken, operation: QueryBinaryOperation)]
    ) throws(QueryParseError) {
        guard let (token, operation) = operators.popLast(), operands.count >= 2 else { return }
        let rhs = operands.removeLast()
        let lhs = operands.removeLast()
        let node: QueryNode =
            switch operation {
            case .coalesce: .coalesce(lhs.node, rhs.node)
            case .arithmetic(let arithmetic): .arithmetic(arithmetic, lhs.node, rhs.node)
            }
        operands.append(try make(node, lhs, rhs, column: lhs.column, at: token.column))
    }

    /// Unary minuses, then a primary. A minus right before a number literal joins the literal.
    func parseOperand(after: QueryParseAfter?) throws(QueryParseError) -> ParsedNode {
        var minuses: [QueryToken] = []
        var after = after
        while symbol(current) == .minus {
            let token = advance()
            minuses.append(token)
            after = .quoted(token)
        }
        guard canStartValue(current) else { throw expected("a value", after: after, at: current) }
        var result: ParsedNode
        if let minus = minuses.last, let folded = try negativeNumber(at: minus) {
            minuses.removeLast()
            result = folded
        } else {
            result = try parsePrimary(after: after)
        }
        for token in minuses.reversed() {
            result = try make(.negate(result.node), result, column: token.column)
        }
        return result
    }

    /// The number literal at the current token made negative, or nil when there is none.
    func negativeNumber(at minus: QueryToken) throws(QueryParseError) -> ParsedNode? {
        let value: RecordValue
        switch current.kind {
        case .integer(let digits): value = try integer("-" + digits, at: minus)
        case .decimal(let digits): value = try decimal("-" + digits, at: minus)
        default: return nil
        }
        advance()
        return literal(value, at: minus)
    }

    func parsePrimary(after: QueryParseAfter?) throws(QueryParseError) -> ParsedNode {
        switch current.kind {
        case .symbol(.leftParen):
            return try parseParenthesized()
        case .dollar:
            return try parseElementPath()
        // The parenthesis first: it is cheap to test, and every field name would be lowercased.
        case .name(let name, quoted: false) where symbol(peek()) == .leftParen && name.lowercased() == "count":
            return try parseCount()
        default:
            return try parseLeaf(after: after)
        }
    }

    func parseParenthesized() throws(QueryParseError) -> ParsedNode {
        let open = advance()
        try enter(open)
        defer { nesting -= 1 }
        let inner = try parseLogical(after: .quoted(open))
        try expectClosing(open)
        advance()
        return ParsedNode(node: inner.node, depth: inner.depth, column: open.column)
    }

    func parseCount() throws(QueryParseError) -> ParsedNode {
        let token = advance()
        let open = advance()
        try enter(token)
        defer { nesting -= 1 }
        let operand = try parseValue(after: .quoted(open))
        guard symbol(current) == .rightParen else {
            throw failure("expected ')' to close count(", at: current.column)
        }
        advance()
        return try make(.count(operand.node), operand, column: token.column)
    }

    /// `$` or `$.path`: the element of the innermost quantifier.
    func parseElementPath() throws(QueryParseError) -> ParsedNode {
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
        return ParsedNode(node: .element(path), depth: 1, column: token.column)
    }

    /// Literals and paths.
    func parseLeaf(after: QueryParseAfter?) throws(QueryParseError) -> ParsedNode {
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
            case nil: return ParsedNode(node: .field(try parseFieldPath()), depth: 1, column: token.column)
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
            throw expected("a field name", after: .quoted(dot), at: current)
        }
        advance()
        return component
    }

    func literal(_ value: RecordValue, at token: QueryToken) -> ParsedNode {
        ParsedNode(node: .literal(value), depth: 1, column: token.column)
    }

    /// An integer literal; too big for `Int64`, a `UInt64` (as a stored `UInt64` is), and beyond
    /// that a Double.
    func integer(_ digits: String, at token: QueryToken) throws(QueryParseError) -> RecordValue {
        if let value = Int64(digits) { return .int(value) }
        if let value = UInt64(digits) { return .uint(value) }
        return try decimal(digits, at: token)
    }

    func decimal(_ digits: String, at token: QueryToken) throws(QueryParseError) -> RecordValue {
        guard let value = Double(digits), value.isFinite else {
            throw failure("the number \(sourceExcerpt(digits)) is out of range", at: token.column)
        }
        return .double(value)
    }
}
