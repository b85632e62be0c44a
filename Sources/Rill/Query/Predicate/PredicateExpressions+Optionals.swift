import Foundation

// Optionals: `??`, `flatMap` (and optional chaining, which the macro writes as `flatMap`) and `!`.
// Nested optionals are refused: `.some(nil)` and `nil` are both stored as null.

extension PredicateExpressions.NilCoalesce: QueryTranslatable {
    /// The equivalent query node; nil when there is none.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        guard !PredicateValues.isOptional(RHS.Output.self),
            let value = context.translate(lhs), let fallback = context.translate(rhs)
        else { return nil }
        return .coalesce(value, fallback)
    }
}

extension PredicateExpressions.ForcedUnwrap: QueryTranslatable {
    /// The value itself: where it is nil, Swift's evaluation throws instead of answering.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        guard !PredicateValues.isOptional(Wrapped.self) else { return nil }
        return context.translate(inner)
    }
}

extension PredicateExpressions.OptionalFlatMap: QueryTranslatable {
    /// `wrapped.flatMap { body }`: null when the wrapped value is, else the body with the
    /// closure's variable standing for the wrapped value. The null test is left out when the body
    /// is a field read from the variable, which reads as null anyway.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        guard !PredicateValues.isOptional(Wrapped.self), !PredicateValues.isOptional(Result.self),
            let value = context.translate(wrapped)
        else { return nil }
        // `(c ? v : nil).flatMap(f)` is `c ? v.flatMap(f) : nil`: a cast to a kind of a family
        // (`($0 as? BakedGood)?.minutes`) reads the record's fields under its kind's test.
        if case .conditional(let condition, let then, .literal(.null)) = value {
            guard let body = flatMap(then, in: &context) else { return nil }
            return .conditional(condition, then: body, otherwise: .literal(.null))
        }
        return flatMap(value, in: &context)
    }

    private func flatMap(_ value: QueryNode, in context: inout PredicateTranslationContext) -> QueryNode? {
        guard let body = context.translate(transform, binding: variable.key, to: value) else { return nil }
        if Self.isRead(body, through: value) { return body }
        return .conditional(.compare(.equal, value, .literal(.null)), then: .literal(.null), otherwise: body)
    }

    private static func isRead(_ body: QueryNode, through value: QueryNode) -> Bool {
        switch (value, body) {
        case (.field(let prefix), .field(let path)), (.element(let prefix), .element(let path)):
            return path.starts(with: prefix)
        default:
            return false
        }
    }
}
