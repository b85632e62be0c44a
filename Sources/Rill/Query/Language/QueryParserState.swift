import Foundation

/// How many parentheses, quantifiers and `count(`s may be open at once: the parser's recursion.
private let maximumNesting = 32
/// How deep the resulting `QueryNode` may be, so that walking it cannot exhaust a stack either.
private let maximumDepth = 128

/// One parse of a query's text: its tokens, where the parse is, and how deep it has gone. A
/// recursive-descent parser, loosest construct first (see `QueryParser`).
final class QueryParserState {
    let text: String
    /// The text's characters; empty when it is plain ASCII (`plainASCII`).
    let characters: [Character]
    let tokens: [QueryToken]
    // One parse's state, used by that parse alone, in accesses that never overlap: unchecked, as
    // a dynamic check of exclusive access costs more than most of the reads it guards.
    @exclusivity(unchecked) var index = 0
    /// Open parentheses, quantifiers and `count(`s.
    @exclusivity(unchecked) var nesting = 0
    /// Quantifier bodies being parsed, in which `$` names the element.
    @exclusivity(unchecked) var quantifiers = 0
    /// Every path written in the text so far, in order, with its column (`QuerySource`).
    @exclusivity(unchecked) var paths: [QuerySource.Path] = []

    /// The text's bytes when each is a character of its own (see `QueryText.plainASCII`).
    let plainASCII: [UInt8]?

    /// - Parameter readsBytes: whether plain ASCII text is read as its bytes; false to walk its
    ///   characters as any other text's (for the tests that compare the two).
    init(_ text: String, readsBytes: Bool = true) throws(QueryParseError) {
        self.text = text
        plainASCII = readsBytes ? QueryText.plainASCII(text) : nil
        // Plain ASCII text is read from its bytes alone.
        characters = plainASCII == nil ? Array(text) : []
        var lexer = QueryLexer(text, characters, plainASCII: plainASCII)
        tokens = try lexer.tokenize()
    }

    // MARK: QueryToken helpers

    var current: QueryToken { tokens[index] }

    func peek() -> QueryToken { tokens[min(index + 1, tokens.count - 1)] }

    @discardableResult
    func advance() -> QueryToken {
        let token = tokens[index]
        if index < tokens.count - 1 { index += 1 }
        return token
    }

    func source(from start: Int, through end: QueryToken) -> String {
        let count = plainASCII?.count ?? characters.count
        let lower = min(max(start - 1, 0), count)
        let upper = min(max(end.column - 1 + end.length, lower), count)
        if let plainASCII { return String(decoding: plainASCII[lower..<upper], as: UTF8.self) }
        return String(characters[lower..<upper])
    }

    func source(_ token: QueryToken) -> String { source(from: token.column, through: token) }

    /// The token quoted for a message: `'x'`.
    func quoted(_ token: QueryToken) -> String { "'\(sourceExcerpt(source(token)))'" }

    /// How a message names the token something should follow: keywords bare, the rest quoted.
    func describe(_ token: QueryToken) -> String { token.keyword?.rawValue ?? quoted(token) }

    /// What a message says `after` is.
    func words(_ after: QueryParseAfter) -> String {
        switch after {
        case .words(let words): words
        case .quotedToken(let span): quoted(span.token)
        case .describedToken(let span): describe(span.token)
        }
    }

    func isAnd(_ token: QueryToken) -> Bool { token.keyword == .and || symbol(token) == .and }

    func isOr(_ token: QueryToken) -> Bool { token.keyword == .or || symbol(token) == .or }

    func isNot(_ token: QueryToken) -> Bool { token.keyword == .not || symbol(token) == .bang }

    func symbol(_ token: QueryToken) -> QuerySymbol? {
        guard case .symbol(let symbol) = token.kind else { return nil }
        return symbol
    }

    /// A name usable as a field or entity: not a bare keyword.
    func isName(_ token: QueryToken) -> Bool {
        guard case .name = token.kind else { return false }
        return token.keyword == nil
    }

    func comparison(_ token: QueryToken) -> QueryComparison? {
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

    func stringTest(_ token: QueryToken) -> QueryStringTest? {
        switch token.keyword {
        case .contains: .contains
        case .beginswith: .beginsWith
        case .endswith: .endsWith
        case .like: .like
        default: nil
        }
    }

    func canStartValue(_ token: QueryToken) -> Bool {
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

    func canStartCondition(_ token: QueryToken) -> Bool {
        canStartValue(token) || isNot(token) || token.keyword == .any || token.keyword == .all
    }

    func failure(_ message: String, at column: Int) -> QueryParseError {
        QueryParseError(message: message, column: column, text: text)
    }

    func expected(_ what: String, after: QueryParseAfter?, at token: QueryToken) -> QueryParseError {
        failure("expected \(what)" + (after.map { " after \(words($0))" } ?? ""), at: token.column)
    }

    func enter(_ token: QueryToken) throws(QueryParseError) {
        nesting += 1
        guard nesting <= maximumNesting else { throw failure("the query is nested too deeply", at: token.column) }
    }

    /// `node` built from `parts`, starting at `column`; too deep, an error at `at` (or `column`).
    func make(
        _ node: QueryNode, _ parts: [ParsedNode], column: Int, at: Int? = nil
    ) throws(QueryParseError) -> ParsedNode {
        var deepest = 0
        for part in parts { deepest = max(deepest, part.depth) }
        return try make(node, depth: 1 + deepest, column: column, at: at)
    }

    /// `make(_:_:column:at:)` for a node of one or two parts, with no array of them made.
    func make(
        _ node: QueryNode, _ part: ParsedNode, _ other: ParsedNode? = nil, column: Int, at: Int? = nil
    ) throws(QueryParseError) -> ParsedNode {
        try make(node, depth: 1 + max(part.depth, other?.depth ?? 0), column: column, at: at)
    }

    private func make(_ node: QueryNode, depth: Int, column: Int, at: Int?) throws(QueryParseError) -> ParsedNode {
        guard depth <= maximumDepth else {
            throw failure("the query is nested too deeply", at: at ?? column)
        }
        return ParsedNode(node: node, depth: depth, column: column)
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
        var after: QueryParseAfter = "sort by"
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
            after = .quoted(advance())
        }
    }

    func parseWholeNumber(after word: String) throws(QueryParseError) -> Int {
        let token = current
        switch token.kind {
        case .integer(let digits):
            guard let value = Int(digits) else {
                throw failure("\(word) \(sourceExcerpt(digits)) is too large", at: token.column)
            }
            advance()
            return value
        case .decimal:
            throw expected("a whole number", after: .words(word), at: token)
        case .symbol(.minus):
            switch peek().kind {
            case .integer, .decimal: throw failure("\(word) must not be negative", at: token.column)
            default: throw expected("a number", after: .words(word), at: token)
            }
        default:
            throw expected("a number", after: .words(word), at: token)
        }
    }

    // MARK: Conditions
    //
    // The functions on the way into a parenthesis (`parseLogical`, `parseNegation`, `parseTest`,
    // `parseValue`, `parseOperand`, `parsePrimary`) loop rather than recurse where they can and
    // keep their frames small, so the stack a query needs stays small: parentheses, quantifiers
    // and `count(` are the only recursion, and `maximumNesting` bounds it.

    /// A predicate: a value used as a condition must be a test, a boolean or a path.
    func parseCondition(after: QueryParseAfter?) throws(QueryParseError) -> ParsedNode {
        try condition(try parseLogical(after: after))
    }

    /// Checks that `parsed` can stand as a condition; a bare path becomes `path == true`.
    func condition(_ parsed: ParsedNode) throws(QueryParseError) -> ParsedNode {
        switch parsed.node {
        case .field, .element:
            return try make(.compare(.equal, parsed.node, .literal(.bool(true))), parsed, column: parsed.column)
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
    func parseLogical(after: QueryParseAfter?) throws(QueryParseError) -> ParsedNode {
        let first = try parseNegation(after: after)
        // Most conditions stand alone: no lists made for them.
        guard isAnd(current) || isOr(current) else { return first }
        var alternatives: [ParsedNode] = []
        var conjuncts = [first]
        while true {
            let token = current
            let isAnd = isAnd(token)
            guard isAnd || isOr(token) else { break }
            advance()
            let next = try parseNegation(after: .described(token))
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
    func join(_ operands: [ParsedNode], or: Bool) throws(QueryParseError) -> ParsedNode {
        guard operands.count > 1 else { return operands[0] }
        var conditions: [ParsedNode] = []
        for operand in operands { conditions.append(try condition(operand)) }
        let nodes = conditions.map(\.node)
        return try make(or ? .or(nodes) : .and(nodes), conditions, column: operands[0].column)
    }

    /// `not`s (or `!`s), then a quantifier or a value with its optional test.
    func parseNegation(after: QueryParseAfter?) throws(QueryParseError) -> ParsedNode {
        var negations: [QueryToken] = []
        var after = after
        while isNot(current) {
            let token = advance()
            negations.append(token)
            after = .described(token)
        }
        guard canStartCondition(current) else { throw expected("a condition", after: after, at: current) }
        var result: ParsedNode
        if current.keyword == .any || current.keyword == .all {
            result = try parseQuantifier()
        } else {
            let value = try parseValue(after: after)
            result = try parseTest(of: value) ?? value
        }
        for token in negations.reversed() {
            let operand = try condition(result)
            result = try make(.not(operand.node), operand, column: token.column)
        }
        return result
    }

    /// The test after a left operand: a comparison, `in`, `between` or a string test, each but the
    /// comparisons optionally preceded by `not`. Nil when no test follows.
    func parseTest(of subject: ParsedNode) throws(QueryParseError) -> ParsedNode? {
        if let comparison = comparison(current) {
            return try parseComparison(comparison, subject)
        }
        let negated = current.keyword == .not
        if negated {
            try checkNegatedTest()
            advance()
        }
        let test: ParsedNode
        if current.keyword == .in {
            test = try parseIn(subject)
        } else if current.keyword == .between {
            test = try parseBetween(subject)
        } else if let kind = stringTest(current) {
            test = try parseStringTest(kind, subject)
        } else {
            return nil
        }
        return negated ? try make(.not(test.node), test, column: subject.column) : test
    }

    func checkNegatedTest() throws(QueryParseError) {
        let next = peek()
        guard next.keyword == .in || next.keyword == .between || stringTest(next) != nil else {
            throw expected("in, between, contains, beginswith, endswith or like", after: "not", at: next)
        }
    }

    func parseComparison(_ comparison: QueryComparison, _ subject: ParsedNode) throws(QueryParseError) -> ParsedNode {
        let token = advance()
        let other = try parseValue(after: .quoted(token))
        if self.comparison(current) != nil {
            throw failure("comparisons cannot be chained; join them with and", at: current.column)
        }
        return try make(.compare(comparison, subject.node, other.node), subject, other, column: subject.column)
    }

    func parseIn(_ subject: ParsedNode) throws(QueryParseError) -> ParsedNode {
        advance()
        guard symbol(current) == .leftBracket else { throw expected("'['", after: "in", at: current) }
        var after = QueryParseAfter.quoted(advance())
        var candidates: [ParsedNode] = []
        if symbol(current) == .rightBracket {
            advance()
        } else {
            while true {
                candidates.append(try parseValue(after: after))
                if symbol(current) == .comma {
                    after = .quoted(advance())
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

    func parseBetween(_ subject: ParsedNode) throws(QueryParseError) -> ParsedNode {
        advance()
        let lower = try parseValue(after: "between")
        guard isAnd(current) else {
            throw expected("'and'", after: "the lower bound of between", at: current)
        }
        let and = advance()
        let upper = try parseValue(after: .described(and))
        return try make(
            .between(subject.node, lower: lower.node, upper: upper.node), [subject, lower, upper],
            column: subject.column)
    }

    func parseStringTest(_ kind: QueryStringTest, _ subject: ParsedNode) throws(QueryParseError) -> ParsedNode {
        let word = advance().keyword?.rawValue ?? kind.rawValue
        var options: QueryStringOptions = []
        if symbol(current) == .leftBracket {
            options = try parseOptions(of: word)
        }
        let pattern = try parseValue(after: .words(word))
        return try make(.string(kind, subject.node, pattern.node, options), subject, pattern, column: subject.column)
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
        let written = sourceExcerpt(source(from: open.column, through: tokens[close]))
        throw failure(
            "unknown option '\(written)' after \(word); expected [c], [d] or [cd]", at: open.column)
    }

    /// `any <path> <test>`, `all <path> <test>`, or either with a body in parentheses.
    func parseQuantifier() throws(QueryParseError) -> ParsedNode {
        let token = advance()
        let subject = try parseQuantifierSubject(after: token)
        try enter(token)
        quantifiers += 1
        defer {
            nesting -= 1
            quantifiers -= 1
        }
        let body: ParsedNode
        if symbol(current) == .leftParen {
            let open = advance()
            body = try parseCondition(after: .quoted(open))
            try expectClosing(open)
            advance()
        } else {
            let element = ParsedNode(node: .element([]), depth: 1, column: current.column)
            guard let test = try parseTest(of: element) else { throw missingQuantifierTest(from: token) }
            body = test
        }
        let node: QueryNode =
            token.keyword == .all ? .all(subject.node, body: body.node) : .any(subject.node, body: body.node)
        return try make(node, subject, body, column: token.column)
    }

    /// The collection of a quantifier: a path, or `$`/`$.path` inside an outer quantifier.
    func parseQuantifierSubject(after token: QueryToken) throws(QueryParseError) -> ParsedNode {
        let start = current
        if isName(start) {
            return ParsedNode(node: .field(try parseFieldPath()), depth: 1, column: start.column)
        }
        if case .dollar = start.kind, quantifiers > 0 {
            return try parseElementPath()
        }
        throw expected("a field name", after: .described(token), at: start)
    }

    func missingQuantifierTest(from token: QueryToken) -> QueryParseError {
        let written = sourceExcerpt(source(from: token.column, through: tokens[max(index - 1, 0)]))
        return expected("a comparison or a test", after: .words("'\(written)'"), at: current)
    }

    func expectClosing(_ open: QueryToken) throws(QueryParseError) {
        guard symbol(current) == .rightParen else {
            throw failure("expected ')' to close the '(' at column \(open.column)", at: current.column)
        }
    }
}
