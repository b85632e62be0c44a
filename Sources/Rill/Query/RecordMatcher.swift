import Foundation

/// A query's filter compiled once to decide each candidate on its stored bytes, without building
/// a `RecordValue` or decoding a model: what makes a full scan cost little more than the walk of
/// the records.
///
/// Its answers are exactly `QueryEvaluator.matches`'s. Where it cannot be sure on the bytes alone
/// it says `unknown`, and the caller evaluates the `RecordValue` as before:
/// - a record whose bytes are malformed (the `RecordValue` path throws the error the store reports),
///   or that is not a map at the top;
/// - text that is not ASCII, in a comparison or a string test (Swift's `String` compares by
///   canonical equivalence, and case folding is Unicode's: on ASCII both are the bytes' order and
///   ASCII case); patterns and constants of text are compiled only when they are ASCII, and string
///   tests only when their pattern holds no CR or LF (`"\r\n"` is one `Character`);
/// - a stored decimal compared with a number (its value is read from its text), a stored UUID
///   compared with text (which is parsed as a UUID);
/// - a node it does not compile (arithmetic, quantifiers, `like`, comparisons of two fields, …):
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

    /// The compiled form of a predicate node.
    indirect enum Test {
        /// `stored op constant`; `reversed` when the query has the constant first, and `op` is
        /// then mirrored (see `compare`).
        case compare(QueryComparison, Operand, Constant, reversed: Bool)
        case isIn(Operand, [Constant])
        case between(Operand, lower: Constant, upper: Constant)
        case text(TextTest)
        case and([Test])
        case or([Test])
        case not(Test)
        /// A node that is not compiled.
        case unknown
    }

    /// A field path: the slot of its top-level field, then the names inside it.
    struct Operand {
        let slot: Int
        let rest: [[UInt8]]
    }

    /// A constant a stored value is compared with.
    enum Constant {
        case null
        case bool(Bool)
        case number(Number)
        /// A string or URL, in ASCII.
        case text([UInt8])
        /// A date's `timeIntervalSinceReferenceDate`.
        case date(Double)
    }

    /// `contains`, `beginswith` or `endswith` of a field's string with an ASCII pattern.
    struct TextTest {
        let test: QueryStringTest
        let operand: Operand
        /// The pattern; lowercased when `foldsCase`.
        let pattern: [UInt8]
        let foldsCase: Bool
        /// Whether the test has options, which make it Foundation's search (an empty pattern is
        /// found nowhere) rather than Swift's (an empty pattern is in every text).
        let hasOptions: Bool
    }

    let test: Test
    /// The UTF-8 of the top-level fields the filter reads, one after the other; slot `i` is the
    /// field whose name is `names[nameRanges[i]]`.
    let names: [UInt8]
    let nameRanges: [Range<Int>]

    /// The number of slots `decide(_:slots:)` needs.
    var slotCount: Int { nameRanges.count }

    /// Compiles `filter`; nil when no part of it compiles, or when it reads the whole record.
    init?(_ filter: QueryNode) {
        guard let fields = filter.topLevelFields else { return nil }
        let ordered = fields.sorted()
        var names: [UInt8] = []
        var ranges: [Range<Int>] = []
        for field in ordered {
            let start = names.count
            names += Array(field.utf8)
            ranges.append(start..<names.count)
        }
        let slots = Dictionary(uniqueKeysWithValues: ordered.enumerated().map { ($1, $0) })
        let test = Self.compile(filter, slots: slots)
        if case .unknown = test { return nil }
        self.test = test
        self.names = names
        self.nameRanges = ranges
    }

    // MARK: - Deciding

    /// Decides `bytes`, a stored record; `slots` is scratch space of `slotCount` offsets, reused
    /// from record to record so that nothing is allocated.
    @inline(__always)
    func decide(_ bytes: UnsafeRawBufferPointer, slots: UnsafeMutableBufferPointer<Int>) -> Decision {
        let reader = RecordReader(bytes)
        let located = names.withUnsafeBufferPointer { names in
            Self.locate(names: names, ranges: nameRanges, in: reader, slots: slots)
        }
        guard located else { return .unknown }
        return evaluate(test, reader, slots)
    }

    private func evaluate(
        _ test: Test, _ reader: RecordReader, _ slots: UnsafeMutableBufferPointer<Int>
    ) -> Decision {
        switch test {
        case .compare(let comparison, let operand, let constant, let reversed):
            return Self.compare(
                comparison, Self.value(of: operand, in: reader, slots), constant, reader, reversed: reversed)
        case .isIn(let operand, let constants):
            let value = Self.value(of: operand, in: reader, slots)
            var unknown = false
            for constant in constants {
                switch Self.compare(.equal, value, constant, reader) {
                case .yes: return .yes
                case .unknown: unknown = true
                case .no: break
                }
            }
            return unknown ? .unknown : .no
        case .between(let operand, let lower, let upper):
            let value = Self.value(of: operand, in: reader, slots)
            return Self.both(
                Self.compare(.greaterOrEqual, value, lower, reader), Self.compare(.lessOrEqual, value, upper, reader))
        case .text(let text):
            return Self.test(text, Self.value(of: text.operand, in: reader, slots), reader)
        case .and(let tests):
            var unknown = false
            for test in tests {
                switch evaluate(test, reader, slots) {
                case .no: return .no
                case .unknown: unknown = true
                case .yes: break
                }
            }
            return unknown ? .unknown : .yes
        case .or(let tests):
            var unknown = false
            for test in tests {
                switch evaluate(test, reader, slots) {
                case .yes: return .yes
                case .unknown: unknown = true
                case .no: break
                }
            }
            return unknown ? .unknown : .no
        case .not(let test):
            switch evaluate(test, reader, slots) {
            case .yes: return .no
            case .no: return .yes
            case .unknown: return .unknown
            }
        case .unknown:
            return .unknown
        }
    }

    private static func both(_ a: Decision, _ b: Decision) -> Decision {
        if a == .no || b == .no { return .no }
        return a == .yes && b == .yes ? .yes : .unknown
    }

    /// `stored op constant`, as `QueryEvaluator.compare` has it; with `reversed`, `op` is the
    /// mirror of the query's `constant op stored`.
    ///
    /// Every order but that of dates is antisymmetric, so the mirrored comparison is the same
    /// test. Dates compare as `Date` does (`==`, then `<`), which orders a NaN date after
    /// everything from either side: their order is taken from the query's side.
    private static func compare(
        _ comparison: QueryComparison, _ stored: StoredValue, _ constant: Constant, _ reader: RecordReader,
        reversed: Bool = false
    ) -> Decision {
        let order: ComparisonResult?
        switch (stored, constant) {
        case (.unknown, _):
            return .unknown
        case (.null, .null):
            return decideNull(comparison, true)
        case (.null, _), (_, .null):
            return decideNull(comparison, false)
        case (.number(let a), .number(let b)):
            order = Number.compare(a, b)
        case (.decimal, .number), (.uuid, .text):
            return .unknown
        case (.text(let range, _), .text(let b)):
            guard let result = orderText(range, b, reader) else { return .unknown }
            order = result
        case (.bool(let a), .bool(let b)):
            order = a == b ? .orderedSame : (!a ? .orderedAscending : .orderedDescending)
        case (.date(let a), .date(let b)):
            // As `Date` compares its intervals.
            if reversed {
                order = a == b ? .orderedSame : (b < a ? .orderedDescending : .orderedAscending)
            } else {
                order = a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
            }
        default:
            order = nil
        }
        let holds: Bool
        switch comparison {
        case .equal: holds = order == .orderedSame
        case .notEqual: holds = order != .orderedSame
        case .less: holds = order == .orderedAscending
        case .lessOrEqual: holds = order == .orderedAscending || order == .orderedSame
        case .greater: holds = order == .orderedDescending
        case .greaterOrEqual: holds = order == .orderedDescending || order == .orderedSame
        }
        return holds ? .yes : .no
    }

    /// A comparison with null on one side at least: only equality has an answer other than false.
    private static func decideNull(_ comparison: QueryComparison, _ bothNull: Bool) -> Decision {
        switch comparison {
        case .equal: return bothNull ? .yes : .no
        case .notEqual: return bothNull ? .no : .yes
        default: return .no
        }
    }

    /// The order of the stored text in `range` and the ASCII `constant`; nil unless the stored
    /// text is ASCII too (then the order of the bytes is `String`'s).
    private static func orderText(
        _ range: Range<Int>, _ constant: [UInt8], _ reader: RecordReader
    ) -> ComparisonResult? {
        let text = UnsafeRawBufferPointer(rebasing: reader.bytes[range])
        guard isASCII(text) else { return nil }
        return constant.withUnsafeBytes { constant in
            let common = min(text.count, constant.count)
            let prefix = common == 0 ? 0 : memcmp(text.baseAddress!, constant.baseAddress!, common)
            if prefix != 0 { return prefix < 0 ? .orderedAscending : .orderedDescending }
            if text.count == constant.count { return .orderedSame }
            return text.count < constant.count ? .orderedAscending : .orderedDescending
        }
    }

    /// A string test on a stored value: false unless it is a string (a URL is not one here, as
    /// in `QueryEvaluator`).
    private static func test(_ text: TextTest, _ stored: StoredValue, _ reader: RecordReader) -> Decision {
        switch stored {
        case .unknown: return .unknown
        case .text(let range, let isURL) where !isURL:
            let bytes = UnsafeRawBufferPointer(rebasing: reader.bytes[range])
            guard isASCII(bytes) else { return .unknown }
            if text.pattern.isEmpty { return text.hasOptions ? .no : .yes }
            let found = text.pattern.withUnsafeBytes { pattern in
                search(text.test, in: bytes, for: pattern, foldsCase: text.foldsCase)
            }
            return found ? .yes : .no
        default: return .no
        }
    }
}

// MARK: - Compiling

extension RecordMatcher {
    private static func compile(_ node: QueryNode, slots: [String: Int]) -> Test {
        switch node {
        case .compare(let comparison, let lhs, let rhs):
            if let operand = operand(lhs, slots), let constant = constant(rhs) {
                return .compare(comparison, operand, constant, reversed: false)
            }
            if let operand = operand(rhs, slots), let constant = constant(lhs) {
                return .compare(comparison.mirrored, operand, constant, reversed: true)
            }
            return .unknown
        case .field:
            // A Bool field as the predicate: true only when it holds `true`.
            guard let operand = operand(node, slots) else { return .unknown }
            return .compare(.equal, operand, .bool(true), reversed: false)
        case .literal(let value):
            return value == .bool(true) ? .and([]) : .or([])
        case .string(let test, let lhs, let rhs, let options):
            guard test != .like, let operand = operand(lhs, slots), case .literal(.string(let pattern)) = rhs,
                pattern.utf8.allSatisfy({ $0 < 0x80 && $0 != 0x0A && $0 != 0x0D })
            else { return .unknown }
            let foldsCase = options.contains(.caseInsensitive)
            let bytes = pattern.utf8.map { foldsCase ? lowercase($0) : $0 }
            return .text(
                TextTest(
                    test: test, operand: operand, pattern: bytes, foldsCase: foldsCase, hasOptions: !options.isEmpty))
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

    private static func operand(_ node: QueryNode, _ slots: [String: Int]) -> Operand? {
        guard case .field(let path) = node, let first = path.first, let slot = slots[first] else { return nil }
        return Operand(slot: slot, rest: path.dropFirst().map { Array($0.utf8) })
    }

    private static func constant(_ node: QueryNode) -> Constant? {
        guard case .literal(let value) = node else { return nil }
        switch value {
        case .null: return .null
        case .bool(let bool): return .bool(bool)
        case .int, .uint, .float, .double, .decimal: return Number(value).map(Constant.number)
        case .string(let text), .url(let text):
            return text.utf8.allSatisfy { $0 < 0x80 } ? .text(Array(text.utf8)) : nil
        case .date(let date): return .date(date.timeIntervalSinceReferenceDate)
        default: return nil
        }
    }
}
