import Foundation

// How `TotalEvaluation` evaluates the standard builders. Each computes as Foundation does while
// its operands have their declared types, and as `QueryEvaluator` does once one of them is an
// `UntypedValue` or where Swift would trap.

// MARK: - What can fail

// Trapping in Swift.
extension PredicateExpressions.Arithmetic: FailingPredicateExpression where LHS.Output: FixedWidthInteger {}
extension PredicateExpressions.IntDivision: FailingPredicateExpression {}
extension PredicateExpressions.IntRemainder: FailingPredicateExpression {}
extension PredicateExpressions.UnaryMinus: FailingPredicateExpression where Wrapped.Output: FixedWidthInteger {}
extension PredicateExpressions.ClosedRange: FailingPredicateExpression {}
// Throwing in Foundation's evaluation.
extension PredicateExpressions.ForcedUnwrap: FailingPredicateExpression {}
extension PredicateExpressions.CollectionIndexSubscript: FailingPredicateExpression {}
extension PredicateExpressions.CollectionRangeSubscript: FailingPredicateExpression {}
extension PredicateExpressions.Range: FailingPredicateExpression {}
extension PredicateExpressions.ForceCast: FailingPredicateExpression {}

extension PredicateExpressions.Value: CapturedPredicateValue {}

// MARK: - Arithmetic

extension PredicateExpressions.Arithmetic: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        let a = try TotalEvaluation.value(of: lhs, bindings)
        let b = try TotalEvaluation.value(of: rhs, bindings)
        let operation: QueryArithmetic =
            switch op {
            case .add: .add
            case .subtract: .subtract
            case .multiply: .multiply
            }
        if let x = a as? LHS.Output, let y = b as? RHS.Output {
            guard x is any FixedWidthInteger else {
                switch op {
                case .add: return x + y
                case .subtract: return x - y
                case .multiply: return x * y
                }
            }
            if let result = TotalEvaluation.checked(operation, x, y) { return result }
        }
        return TotalEvaluation.arithmetic(operation, a, b)
    }
}

extension PredicateExpressions.IntDivision: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        try TotalEvaluation.integerDivision(.divide, lhs, rhs, bindings)
    }
}

extension PredicateExpressions.IntRemainder: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        try TotalEvaluation.integerDivision(.remainder, lhs, rhs, bindings)
    }
}

extension TotalEvaluation {
    fileprivate static func integerDivision<L: PredicateExpression, R: PredicateExpression>(
        _ op: QueryArithmetic, _ lhs: L, _ rhs: R, _ bindings: PredicateBindings
    ) throws -> Any where L.Output: BinaryInteger, L.Output == R.Output {
        let a = try value(of: lhs, bindings)
        let b = try value(of: rhs, bindings)
        if let x = a as? L.Output, let y = b as? R.Output {
            if x is any FixedWidthInteger {
                if let result = checked(op, x, y) { return result }
            } else if y != 0 {
                return op == .divide ? x / y : x % y
            }
        }
        return arithmetic(op, a, b)
    }
}

extension PredicateExpressions.FloatDivision: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        let a = try TotalEvaluation.value(of: lhs, bindings)
        let b = try TotalEvaluation.value(of: rhs, bindings)
        if let x = a as? LHS.Output, let y = b as? RHS.Output { return x / y }
        return TotalEvaluation.arithmetic(.divide, a, b)
    }
}

extension PredicateExpressions.UnaryMinus: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        let a = try TotalEvaluation.value(of: wrapped, bindings)
        if let x = a as? Wrapped.Output {
            guard x is any FixedWidthInteger else { return -x }
            if let result = TotalEvaluation.checked(.subtract, x - x, x) { return result }
        }
        return TotalEvaluation.arithmetic(.subtract, UntypedValue(.int(0)), a)
    }
}

// MARK: - Comparisons and logic

extension PredicateExpressions.Comparison: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        let a = try TotalEvaluation.value(of: lhs, bindings)
        let b = try TotalEvaluation.value(of: rhs, bindings)
        if let x = a as? LHS.Output, let y = b as? RHS.Output {
            switch op {
            case .lessThan: return x < y
            case .lessThanOrEqual: return x <= y
            case .greaterThan: return x > y
            case .greaterThanOrEqual: return x >= y
            }
        }
        let comparison: QueryComparison =
            switch op {
            case .lessThan: .less
            case .lessThanOrEqual: .lessOrEqual
            case .greaterThan: .greater
            case .greaterThanOrEqual: .greaterOrEqual
            }
        return TotalEvaluation.compare(comparison, a, b)
    }
}

extension PredicateExpressions.Equal: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        let a = try TotalEvaluation.value(of: lhs, bindings)
        let b = try TotalEvaluation.value(of: rhs, bindings)
        if let x = a as? LHS.Output, let y = b as? RHS.Output { return x == y }
        return TotalEvaluation.compare(.equal, a, b)
    }
}

extension PredicateExpressions.NotEqual: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        let a = try TotalEvaluation.value(of: lhs, bindings)
        let b = try TotalEvaluation.value(of: rhs, bindings)
        if let x = a as? LHS.Output, let y = b as? RHS.Output { return x != y }
        return TotalEvaluation.compare(.notEqual, a, b)
    }
}

extension PredicateExpressions.Conjunction: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        // As `&&`: the right side is not evaluated when the left is false.
        guard TotalEvaluation.isTrue(try TotalEvaluation.value(of: lhs, bindings)) else { return false }
        return TotalEvaluation.isTrue(try TotalEvaluation.value(of: rhs, bindings))
    }
}

extension PredicateExpressions.Disjunction: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        if TotalEvaluation.isTrue(try TotalEvaluation.value(of: lhs, bindings)) { return true }
        return TotalEvaluation.isTrue(try TotalEvaluation.value(of: rhs, bindings))
    }
}

extension PredicateExpressions.Negation: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        !TotalEvaluation.isTrue(try TotalEvaluation.value(of: wrapped, bindings))
    }
}

extension PredicateExpressions.Conditional: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        TotalEvaluation.isTrue(try TotalEvaluation.value(of: test, bindings))
            ? try TotalEvaluation.value(of: trueBranch, bindings)
            : try TotalEvaluation.value(of: falseBranch, bindings)
    }
}

// MARK: - Values, optionals, ranges

extension PredicateExpressions.KeyPath: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        let base = try TotalEvaluation.value(of: root, bindings)
        // A property of a value that is not there (null) is not there either.
        guard let typed = base as? Root.Output else { return UntypedValue.null }
        return typed[keyPath: keyPath]
    }
}

extension PredicateExpressions.NilCoalesce: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        let a = try TotalEvaluation.value(of: lhs, bindings)
        if let optional = a as? LHS.Output {
            if let wrapped = optional { return wrapped }
        } else if let untyped = a as? UntypedValue, untyped.value != .null {
            return untyped
        }
        return try TotalEvaluation.value(of: rhs, bindings)
    }
}

extension PredicateExpressions.OptionalFlatMap: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        let a = try TotalEvaluation.value(of: wrapped, bindings)
        guard let optional = a as? LHS.Output, let value = optional else { return Result?.none as Any }
        // The transform's value is a `Result` or a `Result?`; either reads as the `Result?` this
        // expression gives.
        return try TotalEvaluation.value(of: transform, bindings.binding(variable, to: value))
    }
}

extension PredicateExpressions.ForcedUnwrap: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        let a = try TotalEvaluation.value(of: inner, bindings)
        if let optional = a as? Inner.Output, let value = optional { return value }
        return UntypedValue.null
    }
}

extension PredicateExpressions.ForceCast: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        (try TotalEvaluation.value(of: input, bindings) as? Desired).map { $0 as Any } ?? UntypedValue.null
    }
}

extension PredicateExpressions.CollectionIndexSubscript: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        let a = try TotalEvaluation.value(of: wrapped, bindings)
        let b = try TotalEvaluation.value(of: index, bindings)
        // An element that is not there reads as null, like a missing field.
        guard let collection = a as? Wrapped.Output, let position = b as? Index.Output,
            position >= collection.startIndex, position < collection.endIndex
        else { return UntypedValue.null }
        return collection[position]
    }
}

extension PredicateExpressions.CollectionRangeSubscript: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        let a = try TotalEvaluation.value(of: wrapped, bindings)
        let b = try TotalEvaluation.value(of: range, bindings)
        guard let collection = a as? Wrapped.Output, let bounds = b as? Range.Output,
            bounds.lowerBound >= collection.startIndex, bounds.upperBound <= collection.endIndex
        else { return UntypedValue.null }
        return collection[bounds]
    }
}

extension PredicateExpressions.ClosedRange: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        let a = try TotalEvaluation.value(of: lower, bindings)
        let b = try TotalEvaluation.value(of: upper, bindings)
        // `lower...upper` traps when the bounds are reversed (or NaN): the range is then the
        // evaluator's `between`, which holds for nothing there.
        if let x = a as? LHS.Output, let y = b as? RHS.Output, x <= y { return x...y }
        return UntypedRange(a, b, isClosed: true)
    }
}

extension PredicateExpressions.Range: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        let a = try TotalEvaluation.value(of: lower, bindings)
        let b = try TotalEvaluation.value(of: upper, bindings)
        if let x = a as? LHS.Output, let y = b as? RHS.Output, x <= y { return x..<y }
        return UntypedRange(a, b, isClosed: false)
    }
}

extension PredicateExpressions.RangeExpressionContains: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        let bounds = try TotalEvaluation.value(of: range, bindings)
        let value = try TotalEvaluation.value(of: element, bindings)
        if let typed = bounds as? RangeExpression.Output, let value = value as? Element.Output {
            return typed.contains(value)
        }
        guard let untyped = bounds as? UntypedRange else { return false }
        return TotalEvaluation.compare(.greaterOrEqual, value, UntypedValue(untyped.lower))
            && TotalEvaluation.compare(
                untyped.isClosed ? .lessOrEqual : .less, value, UntypedValue(untyped.upper))
    }
}

/// A range whose bounds Swift cannot make into a range (reversed, NaN, or past their type): the
/// evaluator's bounds test.
private struct UntypedRange {
    var lower: RecordValue
    var upper: RecordValue
    var isClosed: Bool

    init(_ lower: Any, _ upper: Any, isClosed: Bool) {
        self.lower = TotalEvaluation.recordValue(lower) ?? .null
        self.upper = TotalEvaluation.recordValue(upper) ?? .null
        self.isClosed = isClosed
    }
}

// MARK: - Sequences

extension PredicateExpressions.SequenceContains: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        let items = try TotalEvaluation.value(of: sequence, bindings)
        let value = try TotalEvaluation.value(of: element, bindings)
        guard let items = items as? LHS.Output else { return false }
        if let value = value as? RHS.Output { return items.contains(value) }
        return items.contains { TotalEvaluation.compare(.equal, $0, value) }
    }
}

extension PredicateExpressions.SequenceContainsWhere: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        guard let items = try TotalEvaluation.value(of: sequence, bindings) as? LHS.Output else { return false }
        for item in items
        where TotalEvaluation.isTrue(try TotalEvaluation.value(of: test, bindings.binding(variable, to: item))) {
            return true
        }
        return false
    }
}

extension PredicateExpressions.SequenceAllSatisfy: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        guard let items = try TotalEvaluation.value(of: sequence, bindings) as? LHS.Output else { return true }
        for item in items
        where !TotalEvaluation.isTrue(try TotalEvaluation.value(of: test, bindings.binding(variable, to: item))) {
            return false
        }
        return true
    }
}

extension PredicateExpressions.Filter: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        guard let items = try TotalEvaluation.value(of: sequence, bindings) as? LHS.Output else {
            return [Element]()
        }
        var kept: [Element] = []
        for item in items
        where TotalEvaluation.isTrue(try TotalEvaluation.value(of: filter, bindings.binding(variable, to: item))) {
            kept.append(item)
        }
        return kept
    }
}

// MARK: - Combined predicates

extension PredicateApplication: TotalEvaluable {
    func totalValue(_ bindings: PredicateBindings) throws -> Any {
        let value = try input.evaluate(bindings)
        return TotalEvaluation.isTrue(
            try TotalEvaluation.value(of: predicate.expression, PredicateBindings((predicate.variable, value))))
    }
}
