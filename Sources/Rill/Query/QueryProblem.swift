import Foundation

/// Something wrong with a query that parses: a field its entity's records do not have, or a
/// comparison of a field with a constant it can never equal or order with (`QueryValidator`).
///
/// A problem found from a shape learned from some records is a suspicion: `evidence` says what
/// a stored record would have to hold to disprove it, and `Store.check` reports it only once no
/// record does.
package struct QueryProblem: Sendable {
    /// `.unknownField` or `.kindMismatch`.
    package var code: RillError.Code
    /// What is wrong, for a person, naming the entity and the field.
    package var message: String
    /// The column of the path it is about, when the query came from text.
    package var column: Int?
    /// What would disprove it; nil when the query alone makes it certain (a constant of the
    /// wrong kind where only one kind works, as in `title contains 5`).
    package var evidence: Evidence?

    /// A value that, found in a stored record, shows the problem is not one.
    package struct Evidence: Sendable {
        /// The paths from the record to the values tested: each one after the first is read
        /// from every element of the array the one before gave (a quantifier's elements).
        package var chain: [[String]]
        /// The path tested, from each value `chain` leads to (from the record when it is empty).
        package var path: [String]
        package var test: Test

        /// The top-level field the evidence reads, nil when it needs the whole record.
        var topLevelField: String? { chain.first?.first ?? path.first }

        /// The evidence about the related records a rewritten predicate reads under the top-level
        /// field (`QueryRelationships`), as read from each related record instead; nil when the
        /// related records as a whole are tested (their kind is then certain).
        func rebased() -> Evidence? {
            guard let first = chain.first else {
                return path.count > 1 ? Evidence(chain: [], path: Array(path.dropFirst()), test: test) : nil
            }
            // A quantifier's elements are the related records themselves, or read from each.
            let rest = Array(first.dropFirst())
            return Evidence(chain: (rest.isEmpty ? [] : [rest]) + chain.dropFirst(), path: path, test: test)
        }
    }

    /// What disproves a problem, tested on the values a path reads.
    package enum Test: Sendable {
        /// The path is there (with any value, null included).
        case exists
        /// The value compares with this constant (`QueryValueOrder.compare` gives an order, or
        /// would but for a NaN: a NaN number or date is of a kind that compares).
        case comparesWith(RecordValue)
        /// The value is a string (what string tests read).
        case isString
        /// The value is an array (what quantifiers read).
        case isArray
        /// The value is a number (what arithmetic reads).
        case isNumber
        /// The value is something `count` counts: an array, a string, a map or data.
        case isCountable
    }

    package init(code: RillError.Code, message: String, column: Int?, evidence: Evidence?) {
        self.code = code
        self.message = message
        self.column = column
        self.evidence = evidence
    }

    /// Whether `record` disproves the problem.
    package func isRefuted(by record: RecordValue) -> Bool {
        guard let evidence else { return false }
        var bases = [record]
        for path in evidence.chain {
            var next: [RecordValue] = []
            for base in bases {
                if case .array(let elements) = QueryEvaluator.read(path, from: base) { next += elements }
            }
            bases = next
        }
        switch evidence.test {
        case .exists:
            return bases.contains { Self.exists(evidence.path[...], in: $0) }
        case .comparesWith(let constant):
            return bases.contains { base in
                let value = QueryEvaluator.read(evidence.path, from: base)
                guard value != .null else { return false }
                return QueryValueOrder.compare(value, constant) != nil
                    || QueryValueOrder.unorderedDates(value, constant)
                    || (Number(value) != nil && Number(constant) != nil)
            }
        case .isString, .isArray, .isNumber, .isCountable:
            return bases.contains { base in
                switch (evidence.test, QueryEvaluator.read(evidence.path, from: base)) {
                case (.isString, .string), (.isArray, .array): return true
                case (.isCountable, .array), (.isCountable, .string), (.isCountable, .map), (.isCountable, .data):
                    return true
                case (.isNumber, let value): return Number(value) != nil
                default: return false
                }
            }
        }
    }

    /// The error to throw: the message with its column, and, for a query from text, a
    /// `QueryParseError` as the underlying error (its description shows the query with a caret).
    package func error(in source: QuerySource?) -> RillError {
        guard let column, let source else { return RillError(code, message) }
        return RillError(
            code, "column \(column): \(message)",
            underlyingError: QueryParseError(message: message, column: column, text: source.text))
    }

    /// Whether `path` names something in `value`; through an array, in any of its elements.
    private static func exists(_ path: ArraySlice<String>, in value: RecordValue) -> Bool {
        guard let name = path.first else { return true }
        switch value {
        case .map(let fields):
            guard let field = fields.first(where: { $0.name == name }) else { return false }
            return exists(path.dropFirst(), in: field.value)
        case .array(let elements):
            return elements.contains { exists(path, in: $0) }
        default:
            return false
        }
    }
}
