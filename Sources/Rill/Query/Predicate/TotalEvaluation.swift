import Foundation

/// Evaluates a `#Predicate` on a model with Rill's total semantics, where Foundation's
/// `Predicate.evaluate` would trap or throw.
///
/// Foundation evaluates integer arithmetic with Swift's operators, so a predicate such as
/// `$0.pages * k > 5` kills the process on a record whose product overflows, and so do a division
/// by zero, `-Int.min` and a closed range whose bounds are reversed; a force unwrap of nil, an
/// index out of bounds or a failed `as!` throw. Rill decides such predicates as `QueryEvaluator`
/// decides its own query form (and the text query language): arithmetic is exact, a result that
/// no longer fits its Swift type goes on as the evaluator's value (an exact integer, or the
/// nearest Double past 64 bits), a division by zero, a force unwrap of nil, an element out of
/// bounds and a failed cast give null, and every comparison with null or with a value of another
/// kind is false.
///
/// The evaluation walks the expression tree itself for the standard builders (the conformances
/// to `TotalEvaluable` in `PredicateExpressions+TotalEvaluation.swift`), computing each node with
/// Swift's own operation while its operands are of their declared types, so it answers exactly as
/// Swift does wherever Swift does not trap. An expression of another type (a builder Rill does not
/// know) is evaluated by its own `evaluate`. It is used only for predicates that contain an
/// expression that can fail (`mayFail(_:)`); the others are evaluated by Foundation directly.
enum TotalEvaluation {
    /// Whether `predicate` holds for `value`.
    ///
    /// - Throws: what an expression Rill does not know throws.
    static func evaluate<T>(_ predicate: Predicate<T>, _ value: T) throws -> Bool {
        isTrue(try self.value(of: predicate.expression, PredicateBindings((predicate.variable, value))))
    }

    /// Whether some expression in `expression`'s tree can trap or throw when Foundation
    /// evaluates it.
    static func mayFail(_ expression: Any) -> Bool {
        if expression is any FailingPredicateExpression { return true }
        // Captured values are leaves, however large.
        if expression is any CapturedPredicateValue { return false }
        return Mirror(reflecting: expression).children.contains { mayFail($0.value) }
    }

    /// The value of `expression`: of its declared output type, or an `UntypedValue`.
    static func value<E: PredicateExpression>(of expression: E, _ bindings: PredicateBindings) throws -> Any {
        if let total = expression as? any TotalEvaluable { return try total.totalValue(bindings) }
        return try expression.evaluate(bindings)
    }

    /// Whether a value is true (anything but true is false, as in `QueryEvaluator`).
    static func isTrue(_ value: Any) -> Bool {
        if let bool = value as? Bool { return bool }
        return (value as? UntypedValue)?.value == .bool(true)
    }

    /// A value in the evaluator's form; nil when it has none.
    static func recordValue(_ value: Any) -> RecordValue? {
        if let untyped = value as? UntypedValue { return untyped.value }
        return PredicateValues.literal(value)
    }

    /// `lhs op rhs` as the evaluator computes it, for operands not both of their declared type
    /// or whose operation would trap in Swift.
    static func arithmetic(_ op: QueryArithmetic, _ lhs: Any, _ rhs: Any) -> UntypedValue {
        guard let a = recordValue(lhs), let b = recordValue(rhs) else { return .null }
        return UntypedValue(QueryEvaluator.arithmetic(op, a, b))
    }

    /// `lhs op rhs` for standard integers, with overflow checks: nil on overflow or division by
    /// zero, and for values that are not integers (their own operators cannot trap; callers
    /// apply them).
    static func checked<N>(_ op: QueryArithmetic, _ lhs: N, _ rhs: N) -> N? {
        guard let integer = lhs as? any FixedWidthInteger else { return nil }
        return checkedInteger(op, integer, rhs) as? N
    }

    private static func checkedInteger<I: FixedWidthInteger>(_ op: QueryArithmetic, _ lhs: I, _ rhs: Any) -> I? {
        guard let rhs = rhs as? I else { return nil }
        let (result, overflow): (I, Bool)
        switch op {
        case .add: (result, overflow) = lhs.addingReportingOverflow(rhs)
        case .subtract: (result, overflow) = lhs.subtractingReportingOverflow(rhs)
        case .multiply: (result, overflow) = lhs.multipliedReportingOverflow(by: rhs)
        case .divide:
            guard rhs != 0 else { return nil }
            (result, overflow) = lhs.dividedReportingOverflow(by: rhs)
        case .remainder:
            guard rhs != 0 else { return nil }
            (result, overflow) = lhs.remainderReportingOverflow(dividingBy: rhs)
        }
        return overflow ? nil : result
    }

    /// `comparison` of two values as the evaluator decides it.
    static func compare(_ comparison: QueryComparison, _ lhs: Any, _ rhs: Any) -> Bool {
        guard let a = recordValue(lhs), let b = recordValue(rhs) else { return comparison == .notEqual }
        return QueryEvaluator.compare(comparison, a, b)
    }
}
