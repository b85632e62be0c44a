import Foundation

// The signatures of the builders the translator knows (`PredicateExpressions+QueryTranslatable`
// and its neighbours): each node appends what its type leaves open, and walks its children in
// the order its `queryNode(in:)` translates them.

extension PredicateExpressions.Variable: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {
        signature.variable(key)
    }
}

extension PredicateExpressions.KeyPath: PreparablePredicateExpression where Root: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {
        root.appendSignature(to: &signature)
        signature.keyPath(keyPath)
    }
}

extension PredicateExpressions.Value: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {
        signature.literal(PredicateValues.literal(value))
    }
}

extension PredicateExpressions.NilLiteral: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {}
}

extension PredicateExpressions.Equal: PreparablePredicateExpression
where LHS: PreparablePredicateExpression, RHS: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {
        lhs.appendSignature(to: &signature)
        rhs.appendSignature(to: &signature)
    }
}

extension PredicateExpressions.NotEqual: PreparablePredicateExpression
where LHS: PreparablePredicateExpression, RHS: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {
        lhs.appendSignature(to: &signature)
        rhs.appendSignature(to: &signature)
    }
}

extension PredicateExpressions.Comparison: PreparablePredicateExpression
where LHS: PreparablePredicateExpression, RHS: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {
        switch op {
        case .lessThan: signature.tag(0)
        case .lessThanOrEqual: signature.tag(1)
        case .greaterThan: signature.tag(2)
        case .greaterThanOrEqual: signature.tag(3)
        }
        lhs.appendSignature(to: &signature)
        rhs.appendSignature(to: &signature)
    }
}

extension PredicateExpressions.Conjunction: PreparablePredicateExpression
where LHS: PreparablePredicateExpression, RHS: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {
        lhs.appendSignature(to: &signature)
        rhs.appendSignature(to: &signature)
    }

    /// Each operand's conjuncts, as the translator splits a top-level AND.
    func appendConjuncts(to signature: inout PredicateSignature) {
        lhs.appendConjuncts(to: &signature)
        rhs.appendConjuncts(to: &signature)
    }
}

extension PredicateExpressions.Disjunction: PreparablePredicateExpression
where LHS: PreparablePredicateExpression, RHS: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {
        lhs.appendSignature(to: &signature)
        rhs.appendSignature(to: &signature)
    }
}

extension PredicateExpressions.Negation: PreparablePredicateExpression where Wrapped: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {
        wrapped.appendSignature(to: &signature)
    }
}

extension PredicateExpressions.Conditional: PreparablePredicateExpression
where
    Test: PreparablePredicateExpression, If: PreparablePredicateExpression,
    Else: PreparablePredicateExpression
{
    func appendSignature(to signature: inout PredicateSignature) {
        test.appendSignature(to: &signature)
        trueBranch.appendSignature(to: &signature)
        falseBranch.appendSignature(to: &signature)
    }
}

// MARK: - Arithmetic

extension PredicateExpressions.Arithmetic: PreparablePredicateExpression
where LHS: PreparablePredicateExpression, RHS: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {
        switch op {
        case .add: signature.tag(0)
        case .subtract: signature.tag(1)
        case .multiply: signature.tag(2)
        }
        lhs.appendSignature(to: &signature)
        rhs.appendSignature(to: &signature)
    }
}

extension PredicateExpressions.IntDivision: PreparablePredicateExpression
where LHS: PreparablePredicateExpression, RHS: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {
        lhs.appendSignature(to: &signature)
        rhs.appendSignature(to: &signature)
    }
}

extension PredicateExpressions.IntRemainder: PreparablePredicateExpression
where LHS: PreparablePredicateExpression, RHS: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {
        lhs.appendSignature(to: &signature)
        rhs.appendSignature(to: &signature)
    }
}

extension PredicateExpressions.FloatDivision: PreparablePredicateExpression
where LHS: PreparablePredicateExpression, RHS: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {
        lhs.appendSignature(to: &signature)
        rhs.appendSignature(to: &signature)
    }
}

extension PredicateExpressions.UnaryMinus: PreparablePredicateExpression
where Wrapped: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {
        // A negated captured number is one literal, its negation, as the translation makes it.
        if let captured = wrapped as? any NegatedCapturedValue {
            signature.literal(captured.negatedLiteral)
        } else {
            wrapped.appendSignature(to: &signature)
        }
    }
}

// MARK: - Optionals

extension PredicateExpressions.NilCoalesce: PreparablePredicateExpression
where LHS: PreparablePredicateExpression, RHS: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {
        lhs.appendSignature(to: &signature)
        rhs.appendSignature(to: &signature)
    }
}

extension PredicateExpressions.ForcedUnwrap: PreparablePredicateExpression
where Inner: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {
        inner.appendSignature(to: &signature)
    }
}

extension PredicateExpressions.OptionalFlatMap: PreparablePredicateExpression
where LHS: PreparablePredicateExpression, RHS: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {
        wrapped.appendSignature(to: &signature)
        signature.variable(variable.key)
        transform.appendSignature(to: &signature)
    }
}

// MARK: - Sequences, strings and ranges

extension PredicateExpressions.SequenceContains: PreparablePredicateExpression
where LHS: PreparablePredicateExpression, RHS: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {
        sequence.appendSignature(to: &signature)
        element.appendSignature(to: &signature)
    }
}

extension PredicateExpressions.SequenceContainsWhere: PreparablePredicateExpression
where LHS: PreparablePredicateExpression, RHS: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {
        sequence.appendSignature(to: &signature)
        signature.variable(variable.key)
        test.appendSignature(to: &signature)
    }
}

extension PredicateExpressions.SequenceAllSatisfy: PreparablePredicateExpression
where LHS: PreparablePredicateExpression, RHS: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {
        sequence.appendSignature(to: &signature)
        signature.variable(variable.key)
        test.appendSignature(to: &signature)
    }
}

extension PredicateExpressions.CollectionContainsCollection: PreparablePredicateExpression
where Base: PreparablePredicateExpression, Other: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {
        base.appendSignature(to: &signature)
        other.appendSignature(to: &signature)
    }
}

extension PredicateExpressions.SequenceStartsWith: PreparablePredicateExpression
where Base: PreparablePredicateExpression, Prefix: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {
        base.appendSignature(to: &signature)
        prefix.appendSignature(to: &signature)
    }
}

extension PredicateExpressions.RangeExpressionContains: PreparablePredicateExpression
where RangeExpression: PreparableRangeBounds, Element: PreparablePredicateExpression {
    func appendSignature(to signature: inout PredicateSignature) {
        range.appendBounds(to: &signature)
        element.appendSignature(to: &signature)
    }
}

extension PredicateExpressions.ClosedRange: PreparableRangeBounds
where LHS: PreparablePredicateExpression, RHS: PreparablePredicateExpression {
    func appendBounds(to signature: inout PredicateSignature) {
        lower.appendSignature(to: &signature)
        upper.appendSignature(to: &signature)
    }
}

extension PredicateExpressions.Range: PreparableRangeBounds
where LHS: PreparablePredicateExpression, RHS: PreparablePredicateExpression {
    func appendBounds(to signature: inout PredicateSignature) {
        lower.appendSignature(to: &signature)
        upper.appendSignature(to: &signature)
    }
}

extension PredicateExpressions.Value: PreparableRangeBounds {
    /// A captured `ClosedRange` or `Range`: its bounds, as `rangeBounds(in:)` reads them.
    func appendBounds(to signature: inout PredicateSignature) {
        guard let bounds = PredicateValues.rangeBoundLiterals(of: value) else {
            signature.literal(nil)
            return
        }
        signature.literal(bounds.lower)
        signature.literal(bounds.upper)
    }
}

#if !canImport(Darwin)
    extension PredicateExpressions.LocalizedStandardContains: PreparablePredicateExpression
    where Root: PreparablePredicateExpression, Other: PreparablePredicateExpression {
        func appendSignature(to signature: inout PredicateSignature) {
            root.appendSignature(to: &signature)
            other.appendSignature(to: &signature)
        }
    }
#endif
