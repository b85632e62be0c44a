import Foundation

// Arithmetic, on the types where the evaluator computes what Swift does: the standard integers
// (exactly, wherever Swift does not trap; where it would, the evaluator's total result stands)
// and Double. Float is left out (Swift computes it in single precision, the evaluator in Double),
// and so are Decimal and other numeric types.

extension PredicateExpressions.Arithmetic: QueryTranslatable {
    /// The equivalent query node; nil when there is none.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        guard Self.isSupported(LHS.Output.self), let a = context.translate(lhs), let b = context.translate(rhs)
        else { return nil }
        switch op {
        case .add: return .arithmetic(.add, a, b)
        case .subtract: return .arithmetic(.subtract, a, b)
        case .multiply: return .arithmetic(.multiply, a, b)
        }
    }

    fileprivate static func isSupported(_ type: Any.Type) -> Bool {
        PredicateValues.isInteger(type) || type == Double.self
    }
}

extension PredicateExpressions.IntDivision: QueryTranslatable {
    /// The equivalent query node; nil when there is none.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        guard PredicateValues.isInteger(LHS.Output.self),
            let a = context.translate(lhs), let b = context.translate(rhs)
        else { return nil }
        return .arithmetic(.divide, a, b)
    }
}

extension PredicateExpressions.IntRemainder: QueryTranslatable {
    /// The equivalent query node; nil when there is none.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        guard PredicateValues.isInteger(LHS.Output.self),
            let a = context.translate(lhs), let b = context.translate(rhs)
        else { return nil }
        return .arithmetic(.remainder, a, b)
    }
}

extension PredicateExpressions.FloatDivision: QueryTranslatable {
    /// The equivalent query node; nil when there is none.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        guard LHS.Output.self == Double.self, let a = context.translate(lhs), let b = context.translate(rhs)
        else { return nil }
        return .arithmetic(.divide, a, b)
    }
}

extension PredicateExpressions.UnaryMinus: QueryTranslatable {
    /// The equivalent query node; nil when there is none.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        let type = Wrapped.Output.self
        guard PredicateValues.isSignedInteger(type) || type == Double.self else { return nil }
        if let captured = wrapped as? any NegatedCapturedValue, let negated = captured.negatedLiteral {
            return .literal(context.literal(stored: negated))
        }
        return context.translate(wrapped).map { .negate($0) }
    }
}
