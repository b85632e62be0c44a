import Foundation

/// A query's filter compiled once to decide each candidate on its stored bytes, without building
/// a `RecordValue` or decoding a model: what makes a full scan cost little more than the walk of
/// the records.
///
/// Its answers are exactly `QueryEvaluator.matches`'s. Where it cannot be sure on the bytes alone
/// it says `unknown`, and the caller evaluates the `RecordValue` as before:
/// - a record whose bytes are malformed (the `RecordValue` path throws the error the store reports),
///   or that is not a map at the top; but a record without the text the filter requires
///   (`requiredBytes`) is `no` before it is read;
/// Text is compared and searched on its bytes when it is ASCII (where `String`'s order is the
/// bytes' and folding is ASCII case) and a pattern holds no CR or LF (`"\r\n"` is one
/// `Character`); any other text (and every `like`) is made into `String`s and given to the
/// evaluator's own functions (`String`'s `==` and `<`, `StringMatching.matches`).
/// - a stored decimal compared with a number (its value is read from its text), a stored UUID
///   compared with text (which is parsed as a UUID);
/// - a node it does not compile (arithmetic outside a comparison or with a constant that is not a
///   number, a quantifier inside a quantifier, conditionals, a fallback (`??`) that is not a
///   constant, …):
///   such a node is `unknown` on every record, and decides nothing unless the rest of an `and` or
///   an `or` does (`false && x` is false whatever `x` is).
///
/// For example, `amount > 99990.0` compiles to a comparison of the stored number of the
/// top-level field `amount` with the constant 99990.0, each record's `amount` read as the
/// integer or double it was stored as.
struct RecordMatcher {
    /// The answer for one record.
    enum Decision {
        case no, yes
        /// Decided by evaluating the record's `RecordValue`.
        case unknown
    }

    /// The compiled form of a predicate node, before it is laid out as `Instruction`s.
    indirect enum Test {
        /// `stored op constant`; when the query has the constant first, `op` is mirrored.
        case compare(QueryComparison, Operand, Constant)
        /// `stored op stored`: two fields of the record compared.
        case compareFields(QueryComparison, Operand, Operand)
        /// `lhs op rhs` where a side is arithmetic on fields and numbers (see `Expression`).
        case compareExpressions(QueryComparison, Expression, Expression)
        /// `count(stored) op constant`.
        case compareCount(QueryComparison, Operand, Constant)
        /// `body` holds for any (or with `all`, every) element of the stored array.
        case quantified(all: Bool, Operand, body: Test)
        case isIn(Operand, [Constant])
        case between(Operand, lower: Constant, upper: Constant)
        case text(TextTest)
        case and([Test])
        case or([Test])
        case not(Test)
        /// A node that is not compiled.
        case unknown
    }

    /// A side of a comparison with arithmetic: a field, a number, or arithmetic (`+ - * / %`,
    /// negation) on them, computed by `QueryEvaluator.arithmetic` itself.
    indirect enum Expression {
        case field(Operand)
        case number(Number)
        case arithmetic(QueryArithmetic, Expression, Expression)
        case negate(Expression)
    }

    /// What `compile` may read: the slots of the record's top-level fields, and, in the body of a
    /// quantifier, the current element (one level: a quantifier in a body is not compiled).
    private struct Scope {
        var slots: [String: Int]
        var inElement = false
    }

    /// A field path: the slot of its top-level field, then the names inside it; for the current
    /// element of a quantifier, `elementSlot` and the whole path.
    struct Operand {
        let slot: Int
        let rest: [[UInt8]]

        /// The slot of a quantifier's current element.
        static let elementSlot = -1
    }

    /// A constant a stored value is compared with.
    enum Constant {
        case null
        case bool(Bool)
        case number(Number)
        /// A string or URL, its UTF-8.
        case text([UInt8])
        /// A date's `timeIntervalSinceReferenceDate`.
        case date(Double)
    }

    /// A string test of a field's string with a constant pattern.
    struct TextTest {
        let test: QueryStringTest
        let operand: Operand
        /// The pattern; lowercased when `foldsCase`.
        let pattern: [UInt8]
        let foldsCase: Bool
        /// Whether the test has options, which make it Foundation's search (an empty pattern is
        /// found nowhere) rather than Swift's (an empty pattern is in every text).
        let hasOptions: Bool
        /// The pattern as written, and the options, for `StringMatching.matches`.
        let written: [UInt8]
        let options: QueryStringOptions
        /// Whether every text is tested by `StringMatching.matches` (`like`, a pattern that is not
        /// ASCII or holds CR or LF); else only text that is not ASCII.
        let needsStrings: Bool
    }

    /// The tests in prefix order, each followed by its operands' (see `Program`).
    ///
    /// Laid out flat, of plain values only, so that deciding a record touches no reference
    /// counts: the instructions, constants and byte strings are read through pointers.
    private(set) var code: [Instruction] = []
    private(set) var constants: [Program.Constant] = []
    /// The nodes of the comparisons' arithmetic, each followed by its operands (see `Program.Node`).
    private(set) var nodes: [Program.Node] = []
    /// The bytes of the field names, path names, patterns and text constants, one after the other.
    private(set) var pool: [UInt8] = []
    /// Ranges of `pool`: first the name of each slot's top-level field, then the names of paths,
    /// then `required`.
    private(set) var strings: [Range<Int>] = []
    /// The number of top-level fields the filter reads.
    let slotCount: Int
    /// A range of `pool` holding bytes that every record the filter matches holds somewhere, so
    /// that a record without them is decided without reading its fields (see `requiredBytes`);
    /// empty when the filter requires none.
    private(set) var required = 0..<0

    /// Compiles `filter`; nil when no part of it compiles, or when it reads the whole record.
    init?(_ filter: QueryNode) {
        guard let fields = filter.topLevelFields else { return nil }
        let ordered = fields.sorted()
        slotCount = ordered.count
        let slots = Dictionary(uniqueKeysWithValues: ordered.enumerated().map { ($1, $0) })
        let test = Self.compile(filter, slots: Scope(slots: slots))
        if case .unknown = test { return nil }
        for field in ordered { strings.append(store(Array(field.utf8))) }
        assemble(test)
        if let bytes = Self.requiredBytes(test) { required = store(bytes) }
        // Last, where the program reads it (see `Program.required`).
        strings.append(required)
    }

    /// The longest text that a record must hold, byte for byte, for `test` to be true of it: the
    /// pattern of a case-sensitive `contains`, `beginswith` or `endswith`, or a text constant a
    /// field equals, of a top-level field, in the `and` at the top of the filter. Text is stored
    /// as its UTF-8, so a record that holds no such bytes is decided `no` on them alone.
    ///
    /// Only text that no other text equals is taken: ASCII without CR or LF, and none of the three
    /// ASCII characters a single other scalar is canonically equivalent to (`K`, KELVIN SIGN;
    /// `;`, GREEK QUESTION MARK; `` ` ``, GREEK VARIA), which `String` finds in text that does not
    /// hold their bytes. Nor text that reads as a UUID, which a stored UUID equals.
    ///
    /// A record that is not well formed is then decided `no` when it lacks the bytes, without the
    /// error the `RecordValue` path would report, as it is when an index leaves it out.
    static func requiredBytes(_ test: Test) -> [UInt8]? {
        func rigid(_ text: [UInt8]) -> Bool {
            !text.isEmpty && text.allSatisfy { $0 < 0x80 && !unrigidBytes.contains($0) }
        }
        switch test {
        case .and(let tests):
            return tests.lazy.compactMap(requiredBytes).max { $0.count < $1.count }
        case .text(let text):
            guard text.operand.slot >= 0, text.operand.rest.isEmpty, text.test != .like, !text.hasOptions,
                !text.needsStrings, rigid(text.pattern)
            else { return nil }
            return text.pattern
        case .compare(.equal, let operand, .text(let constant)):
            guard operand.slot >= 0, operand.rest.isEmpty, rigid(constant),
                UUIDText.uuid(String(decoding: constant, as: UTF8.self)) == nil
            else { return nil }
            return constant
        default:
            return nil
        }
    }

    /// The ASCII bytes `requiredBytes` does not take: CR and LF, and the three characters that a
    /// single scalar outside ASCII is canonically equivalent to (`RecordMatcherTests` checks the
    /// list against `String`'s own equality over every scalar).
    static let unrigidBytes: [UInt8] = [0x0A, 0x0D, UInt8(ascii: "K"), UInt8(ascii: ";"), UInt8(ascii: "`")]

    /// Runs `body` with the matcher's program, readable through pointers for the length of the
    /// call, and scratch space for the fields' offsets and the keys' memo; nil when `matcher` is nil.
    @inline(__always)
    static func withProgram<R>(_ matcher: RecordMatcher?, _ body: (Program?) throws -> R) rethrows -> R {
        guard let matcher else { return try body(nil) }
        return try matcher.code.withUnsafeBufferPointer { code in
            try matcher.nodes.withUnsafeBufferPointer { nodes in
                try matcher.constants.withUnsafeBufferPointer { constants in
                    try matcher.pool.withUnsafeBufferPointer { pool in
                        try matcher.strings.withUnsafeBufferPointer { strings in
                            // The fields' slots, then the current element's.
                            try withUnsafeTemporaryAllocation(of: Int.self, capacity: matcher.slotCount + 1) {
                                slots in
                                slots[matcher.slotCount] = RecordReader.missingValue
                                return try withUnsafeTemporaryAllocation(of: KeyMemo.self, capacity: memoCapacity) {
                                    memo in
                                    memo.initialize(repeating: KeyMemo())
                                    return try body(
                                        Program(
                                            code: code, constants: constants, nodes: nodes, pool: pool,
                                            strings: strings,
                                            slots: UnsafeMutableBufferPointer(rebasing: slots[0..<matcher.slotCount]),
                                            memo: memo))
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    // MARK: - Laying out

    private mutating func store(_ bytes: [UInt8]) -> Range<Int> {
        let start = pool.count
        pool += bytes
        return start..<pool.count
    }

    private mutating func constant(_ constant: Constant) -> Program.Constant {
        switch constant {
        case .null: return .null
        case .bool(let bool): return .bool(bool)
        case .number(let number): return .number(number)
        case .text(let text): return .text(store(text))
        case .date(let date): return .date(date)
        }
    }

    private mutating func path(_ operand: Operand) -> Range<Int> {
        let start = strings.count
        for name in operand.rest { strings.append(store(name)) }
        return start..<strings.count
    }

    /// Appends `expression` and its operands to `nodes`.
    private mutating func layOut(_ expression: Expression) {
        let index = nodes.count
        var node = Program.Node(kind: .number)
        switch expression {
        case .field(let operand):
            node.kind = .field
            node.slot = operand.slot
            node.path = path(operand)
        case .number(let number):
            node.number = number
        case .arithmetic(let op, _, _):
            node.kind = .arithmetic
            node.op = op
        case .negate:
            node.kind = .negate
        }
        nodes.append(node)
        switch expression {
        case .arithmetic(_, let lhs, let rhs):
            layOut(lhs)
            layOut(rhs)
        case .negate(let operand):
            layOut(operand)
        default:
            break
        }
        nodes[index].end = nodes.count
    }

    /// Appends `test` and its operands to `code`.
    private mutating func assemble(_ test: Test) {
        let index = code.count
        var instruction = Instruction(kind: .unknown)
        func operand(_ operand: Operand) {
            instruction.slot = operand.slot
            instruction.path = path(operand)
        }
        func constants(_ list: [Constant]) {
            let start = self.constants.count
            for item in list { self.constants.append(constant(item)) }
            instruction.constants = start..<self.constants.count
        }
        switch test {
        case .compare(let comparison, let field, let value),
            .compareCount(let comparison, let field, let value):
            if case .compareCount = test { instruction.kind = .compareCount } else { instruction.kind = .compare }
            if case .compare = test, field.rest.isEmpty, case .number(.double(let double)) = value,
                !double.isNaN
            {
                instruction.kind = .compareDouble
                instruction.double = double
            }
            instruction.comparison = comparison
            operand(field)
            constants([value])
        case .compareFields(let comparison, let lhs, let rhs):
            instruction.kind = .compareFields
            instruction.comparison = comparison
            operand(lhs)
            instruction.otherSlot = rhs.slot
            instruction.otherPath = path(rhs)
        case .compareExpressions(let comparison, let lhs, let rhs):
            instruction.kind = .compareExpressions
            instruction.comparison = comparison
            let start = nodes.count
            layOut(lhs)
            layOut(rhs)
            instruction.expressions = start..<nodes.count
        case .quantified(let all, let collection, _):
            instruction.kind = all ? .allElements : .anyElement
            operand(collection)
        case .isIn(let field, let values):
            instruction.kind = .isIn
            operand(field)
            constants(values)
        case .between(let field, let lower, let upper):
            instruction.kind = .between
            operand(field)
            constants([lower, upper])
        case .text(let text):
            instruction.kind = .text
            operand(text.operand)
            instruction.test = text.test
            instruction.pattern = store(text.pattern)
            instruction.foldsCase = text.foldsCase
            instruction.hasOptions = text.hasOptions
            instruction.written = store(text.written)
            instruction.options = text.options
            instruction.needsStrings = text.needsStrings
        case .and, .or, .not:
            instruction.kind = {
                if case .and = test { return .and }
                if case .or = test { return .or }
                return .not
            }()
        case .unknown:
            break
        }
        code.append(instruction)
        switch test {
        case .and(let tests), .or(let tests): for test in tests { assemble(test) }
        case .not(let test), .quantified(_, _, let test): assemble(test)
        default: break
        }
        code[index].end = code.count
    }
}

// MARK: - Compiling

extension RecordMatcher {
    private static func compile(_ node: QueryNode, slots: Scope) -> Test {
        if let test = compileCoalesced(node, slots: slots) { return test }
        switch node {
        case .compare(let comparison, let lhs, let rhs):
            if let operand = operand(lhs, slots), let constant = constant(rhs) {
                return .compare(comparison, operand, constant)
            }
            if let operand = operand(rhs, slots), let constant = constant(lhs) {
                return .compare(comparison.mirrored, operand, constant)
            }
            if let lhs = operand(lhs, slots), let rhs = operand(rhs, slots) {
                return .compareFields(comparison, lhs, rhs)
            }
            if let lhs = expression(lhs, slots), let rhs = expression(rhs, slots) {
                switch (lhs, rhs) {
                case (.arithmetic, _), (.negate, _), (_, .arithmetic), (_, .negate):
                    return .compareExpressions(comparison, lhs, rhs)
                default:
                    break
                }
            }
            if case .count(let counted) = lhs, let operand = operand(counted, slots), let constant = constant(rhs) {
                return .compareCount(comparison, operand, constant)
            }
            if case .count(let counted) = rhs, let operand = operand(counted, slots), let constant = constant(lhs) {
                return .compareCount(comparison.mirrored, operand, constant)
            }
            return .unknown
        case .any(let collection, let body), .all(let collection, let body):
            // The body reads the element through the element's slot; one level of quantifiers.
            guard !slots.inElement, case .field = collection, let operand = operand(collection, slots) else {
                return .unknown
            }
            var inner = slots
            inner.inElement = true
            let test = compile(body, slots: inner)
            if case .unknown = test { return .unknown }
            if case .all = node { return .quantified(all: true, operand, body: test) }
            return .quantified(all: false, operand, body: test)
        case .field:
            // A Bool field as the predicate: true only when it holds `true`.
            guard let operand = operand(node, slots) else { return .unknown }
            return .compare(.equal, operand, .bool(true))
        case .literal(let value):
            return value == .bool(true) ? .and([]) : .or([])
        case .string(let test, let lhs, let rhs, let options):
            guard let operand = operand(lhs, slots), case .literal(.string(let pattern)) = rhs else { return .unknown }
            let needsStrings =
                test == .like || !pattern.utf8.allSatisfy({ $0 < 0x80 && $0 != 0x0A && $0 != 0x0D })
            let foldsCase = options.contains(.caseInsensitive)
            let bytes = needsStrings ? [] : pattern.utf8.map { foldsCase ? lowercase($0) : $0 }
            return .text(
                TextTest(
                    test: test, operand: operand, pattern: bytes, foldsCase: foldsCase, hasOptions: !options.isEmpty,
                    written: Array(pattern.utf8), options: options, needsStrings: needsStrings))
        case .isIn(let value, let candidates):
            guard let operand = operand(value, slots) else { return .unknown }
            var constants: [Constant] = []
            for candidate in candidates {
                guard let constant = constant(candidate) else { return .unknown }
                constants.append(constant)
            }
            return .isIn(operand, constants)
        case .between(let value, let lower, let upper):
            guard let operand = operand(value, slots), let lower = constant(lower), let upper = constant(upper) else {
                return .unknown
            }
            return .between(operand, lower: lower, upper: upper)
        case .and(let operands):
            return .and(operands.map { compile($0, slots: slots) })
        case .or(let operands):
            return .or(operands.map { compile($0, slots: slots) })
        case .not(let operand):
            return .not(compile(operand, slots: slots))
        default:
            return .unknown
        }
    }

    /// A comparison, string test, `in` list or `between` of `field ?? constant` with constants,
    /// compiled as `field == null && R || field != null && T`: `R` is the test of the fallback,
    /// decided now by `QueryEvaluator` (all else in it is constant), and `T` the test of
    /// the field (`T` decides nothing on a null field, where the fallback stands in for it, and
    /// the null test is the evaluator's: a missing field reads as null). Nil for any other node.
    private static func compileCoalesced(_ node: QueryNode, slots: Scope) -> Test? {
        func split(_ operand: QueryNode) -> (field: QueryNode, fallback: QueryNode)? {
            guard case .coalesce(let value, let fallback) = operand, case .field = value, case .literal = fallback
            else { return nil }
            return (value, fallback)
        }
        let parts: (field: QueryNode, fallback: QueryNode)
        let rebuilt: (QueryNode) -> QueryNode
        // The node's other operands: only constants let the fallback's test be decided now (a
        // quantifier's element, which reads no field of the record, is not one).
        let others: [QueryNode]
        switch node {
        case .compare(let comparison, let lhs, let rhs):
            if let split = split(lhs) {
                (parts, rebuilt, others) = (split, { .compare(comparison, $0, rhs) }, [rhs])
            } else if let split = split(rhs) {
                (parts, rebuilt, others) = (split, { .compare(comparison, lhs, $0) }, [lhs])
            } else {
                return nil
            }
        case .string(let test, let lhs, let rhs, let options):
            guard let split = split(lhs) else { return nil }
            (parts, rebuilt, others) = (split, { .string(test, $0, rhs, options) }, [rhs])
        case .isIn(let value, let candidates):
            guard let split = split(value) else { return nil }
            (parts, rebuilt, others) = (split, { .isIn($0, candidates) }, candidates)
        case .between(let value, let lower, let upper):
            guard let split = split(value) else { return nil }
            (parts, rebuilt, others) = (split, { .between($0, lower: lower, upper: upper) }, [lower, upper])
        default:
            return nil
        }
        let withFallback = rebuilt(parts.fallback)
        guard others.allSatisfy({ if case .literal = $0 { true } else { false } }),
            let field = operand(parts.field, slots)
        else {
            return .unknown
        }
        let fallbackHolds = QueryEvaluator.matches(withFallback, .map([]))
        let isNull = Test.compare(.equal, field, .null)
        let withField = compile(rebuilt(parts.field), slots: slots)
        return fallbackHolds ? .or([isNull, withField]) : .and([.not(isNull), withField])
    }

    /// `node` as arithmetic on fields and numbers; nil when it holds anything else (a literal
    /// that is not a number, which `compile` leaves to the evaluator).
    private static func expression(_ node: QueryNode, _ slots: Scope) -> Expression? {
        switch node {
        case .field, .element:
            return operand(node, slots).map(Expression.field)
        case .literal(let value):
            switch value {
            case .int, .uint, .float, .double: return Number(value).map(Expression.number)
            default: return nil
            }
        case .arithmetic(let op, let lhs, let rhs):
            guard let lhs = expression(lhs, slots), let rhs = expression(rhs, slots) else { return nil }
            return .arithmetic(op, lhs, rhs)
        case .negate(let operand):
            return expression(operand, slots).map(Expression.negate)
        default:
            return nil
        }
    }

    private static func operand(_ node: QueryNode, _ slots: Scope) -> Operand? {
        if case .element(let path) = node, slots.inElement {
            return Operand(slot: Operand.elementSlot, rest: path.map { Array($0.utf8) })
        }
        guard case .field(let path) = node, let first = path.first, let slot = slots.slots[first] else { return nil }
        return Operand(slot: slot, rest: path.dropFirst().map { Array($0.utf8) })
    }

    private static func constant(_ node: QueryNode) -> Constant? {
        guard case .literal(let value) = node else { return nil }
        switch value {
        case .null: return .null
        case .bool(let bool): return .bool(bool)
        case .int, .uint, .float, .double, .decimal: return Number(value).map(Constant.number)
        case .string(let text), .url(let text):
            return .text(Array(text.utf8))
        case .date(let date): return .date(date.timeIntervalSinceReferenceDate)
        default: return nil
        }
    }
}
