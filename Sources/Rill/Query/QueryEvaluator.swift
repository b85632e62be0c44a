import Foundation

/// Evaluates `QueryNode`s against schema-less records (`RecordValue`).
///
/// Semantics, chosen to agree with Swift evaluating the same `#Predicate` on the decoded model:
/// - A missing field reads as null. Comparing null with `==` is true only against null; any
///   ordering comparison involving null, NaN or values of kinds that do not compare is false,
///   except `<=` and `>=` of two dates of which one is NaN, which hold as `Date`'s do.
/// - Numbers compare exactly across integer and floating-point kinds.
/// - `and`, `or`, `not` treat anything but `true` as false.
/// - Arithmetic never traps: integers are computed exactly, an integer result too large for 64
///   bits is the nearest Double, and integer division or remainder by zero gives null (so
///   comparisons with it are false). See `arithmetic(_:_:_:)`.
package struct QueryEvaluator {
    private var elements: [RecordValue] = []

    package init() {}

    /// Whether `predicate` holds for `record`.
    package static func matches(_ predicate: QueryNode, _ record: RecordValue) -> Bool {
        var evaluator = QueryEvaluator()
        return evaluator.value(of: predicate, in: record) == .bool(true)
    }

    /// The value of `node` for `record`.
    package mutating func value(of node: QueryNode, in record: RecordValue) -> RecordValue {
        switch node {
        case .field(let path):
            return Self.read(path, from: record)
        case .element(let path):
            return Self.read(path, from: elements.last ?? .null)
        case .literal(let value):
            return value
        case .compare(let comparison, let lhs, let rhs):
            let a = value(of: lhs, in: record)
            let b = value(of: rhs, in: record)
            return .bool(Self.compare(comparison, a, b))
        case .and(let operands):
            for operand in operands where value(of: operand, in: record) != .bool(true) { return .bool(false) }
            return .bool(true)
        case .or(let operands):
            for operand in operands where value(of: operand, in: record) == .bool(true) { return .bool(true) }
            return .bool(false)
        case .not(let operand):
            return .bool(value(of: operand, in: record) != .bool(true))
        case .string(let test, let lhs, let rhs, let options):
            guard case .string(let text) = value(of: lhs, in: record),
                case .string(let pattern) = value(of: rhs, in: record)
            else { return .bool(false) }
            return .bool(StringMatching.matches(test, text, pattern, options))
        case .isIn(let operand, let candidates):
            let a = value(of: operand, in: record)
            for candidate in candidates where QueryValueOrder.equal(a, value(of: candidate, in: record)) {
                return .bool(true)
            }
            return .bool(false)
        case .between(let operand, let lower, let upper):
            let a = value(of: operand, in: record)
            return .bool(
                Self.compare(.greaterOrEqual, a, value(of: lower, in: record))
                    && Self.compare(.lessOrEqual, a, value(of: upper, in: record)))
        case .any(let collection, let body):
            guard case .array(let items) = value(of: collection, in: record) else { return .bool(false) }
            for item in items {
                elements.append(item)
                let holds = value(of: body, in: record) == .bool(true)
                elements.removeLast()
                if holds { return .bool(true) }
            }
            return .bool(false)
        case .all(let collection, let body):
            guard case .array(let items) = value(of: collection, in: record) else { return .bool(true) }
            for item in items {
                elements.append(item)
                let holds = value(of: body, in: record) == .bool(true)
                elements.removeLast()
                if !holds { return .bool(false) }
            }
            return .bool(true)
        case .count(let operand):
            switch value(of: operand, in: record) {
            case .array(let items): return .int(Int64(items.count))
            case .string(let text): return .int(Int64(text.count))
            case .map(let fields): return .int(Int64(fields.count))
            case .data(let data): return .int(Int64(data.count))
            default: return .int(0)
            }
        case .arithmetic(let op, let lhs, let rhs):
            return Self.arithmetic(op, value(of: lhs, in: record), value(of: rhs, in: record))
        case .negate(let operand):
            return Self.arithmetic(.subtract, .int(0), value(of: operand, in: record))
        case .coalesce(let operand, let fallback):
            let a = value(of: operand, in: record)
            return a == .null ? value(of: fallback, in: record) : a
        case .conditional(let condition, let then, let otherwise):
            return value(of: condition, in: record) == .bool(true)
                ? value(of: then, in: record) : value(of: otherwise, in: record)
        }
    }

    // MARK: - Pieces

    /// Reads a field path; through arrays, maps over their elements (flattening one level per array).
    package static func read(_ path: [String], from value: RecordValue) -> RecordValue {
        var current = value
        for (index, name) in path.enumerated() {
            switch current {
            case .map(let fields):
                current = fields.value(named: name) ?? .null
            case .array(let items):
                let rest = Array(path[index...])
                var mapped: [RecordValue] = []
                for item in items {
                    if case .array(let inner) = read(rest, from: item) {
                        mapped += inner
                    } else {
                        mapped.append(read(rest, from: item))
                    }
                }
                return .array(mapped)
            default:
                return .null
            }
        }
        return current
    }

    package static func compare(_ comparison: QueryComparison, _ a: RecordValue, _ b: RecordValue) -> Bool {
        switch comparison {
        case .equal: return QueryValueOrder.equal(a, b)
        case .notEqual: return !QueryValueOrder.equal(a, b)
        case .less: return QueryValueOrder.compare(a, b) == .orderedAscending
        case .lessOrEqual:
            // A switch, not a list's `contains`: that made the list at every comparison.
            switch QueryValueOrder.compare(a, b) {
            case .orderedAscending?, .orderedSame?: return true
            case .orderedDescending?: return false
            case nil: return QueryValueOrder.unorderedDates(a, b)
            }
        case .greater: return QueryValueOrder.compare(a, b) == .orderedDescending
        case .greaterOrEqual:
            switch QueryValueOrder.compare(a, b) {
            case .orderedDescending?, .orderedSame?: return true
            case .orderedAscending?: return false
            case nil: return QueryValueOrder.unorderedDates(a, b)
            }
        }
    }

    /// `a op b` on numbers, total: integers (of any sign and width up to 64 bits) are computed
    /// exactly, and the result is an integer when it fits one (`Int64`, else `UInt64`); an
    /// integer result that fits neither is given as the nearest Double. Division and remainder
    /// by an integer zero give null. Any floating-point operand makes it IEEE arithmetic in
    /// Double. Non-numbers give null.
    package static func arithmetic(_ op: QueryArithmetic, _ a: RecordValue, _ b: RecordValue) -> RecordValue {
        guard let x = Number(a), let y = Number(b) else { return .null }
        if let i = x.integerValue, let j = y.integerValue {
            let result: Int128
            switch op {
            case .add: result = i + j
            case .subtract: result = i - j
            case .multiply:
                let (product, overflow) = i.multipliedReportingOverflow(by: j)
                guard !overflow else { return .double(Double(i) * Double(j)) }
                result = product
            case .divide:
                guard j != 0 else { return .null }
                result = i / j
            case .remainder:
                guard j != 0 else { return .null }
                result = i % j
            }
            if let int = Int64(exactly: result) { return .int(int) }
            if let uint = UInt64(exactly: result) { return .uint(uint) }
            return .double(Double(result))
        }
        let (u, v) = (x.doubleValue, y.doubleValue)
        switch op {
        case .add: return .double(u + v)
        case .subtract: return .double(u - v)
        case .multiply: return .double(u * v)
        case .divide: return .double(u / v)
        case .remainder: return .double(u.truncatingRemainder(dividingBy: v))
        }
    }
}
