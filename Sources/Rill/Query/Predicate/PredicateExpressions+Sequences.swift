import Foundation

// Sequences, strings and ranges.

extension PredicateExpressions.SequenceContains: QueryTranslatable {
    /// `[a, b].contains(x)` → `x in [a, b]`; `field.contains(x)` on an array field → some element
    /// equals `x`.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        guard PredicateValues.supportsEquality(RHS.Output.self), PredicateValues.isStoredAsArray(LHS.Output.self),
            let collection = context.translate(sequence), let value = context.translate(element)
        else { return nil }
        if case .literal(.array(let items)) = collection {
            return .isIn(value, items.map { .literal($0) })
        }
        guard !PredicateTranslationContext.readsElement(value) else { return nil }
        return .any(collection, body: .compare(.equal, .element([]), value))
    }
}

extension PredicateExpressions.SequenceContainsWhere: QueryTranslatable {
    /// The equivalent query node; nil when there is none.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        guard PredicateValues.isStoredAsArray(LHS.Output.self), let collection = context.translate(sequence),
            let body = context.translateQuantifierBody(test, variable: variable.key)
        else { return nil }
        return .any(collection, body: body)
    }
}

extension PredicateExpressions.SequenceAllSatisfy: QueryTranslatable {
    /// The equivalent query node; nil when there is none.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        guard PredicateValues.isStoredAsArray(LHS.Output.self), let collection = context.translate(sequence),
            let body = context.translateQuantifierBody(test, variable: variable.key)
        else { return nil }
        return .all(collection, body: body)
    }
}

extension PredicateExpressions.CollectionContainsCollection: QueryTranslatable {
    /// `text.contains(other)` on strings.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        guard Base.Output.self == String.self, Other.Output.self == String.self,
            let text = context.translate(base), let pattern = context.translate(other)
        else { return nil }
        return .string(.contains, text, pattern, [])
    }
}

extension PredicateExpressions.SequenceStartsWith: QueryTranslatable {
    /// `text.starts(with: prefix)` on strings.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        guard Base.Output.self == String.self, Prefix.Output.self == String.self,
            let text = context.translate(base), let start = context.translate(prefix)
        else { return nil }
        return .string(.beginsWith, text, start, [])
    }
}

extension PredicateExpressions.RangeExpressionContains: QueryTranslatable {
    /// `(a...b).contains(x)` → `x between a and b`; `(a..<b).contains(x)` → `x >= a && x < b`.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        guard PredicateValues.supportsOrdering(Element.Output.self),
            let bounds = range as? any RangeBounds,
            let (lower, upper, isClosed) = bounds.rangeBounds(in: &context),
            let value = context.translate(element)
        else { return nil }
        if isClosed { return .between(value, lower: lower, upper: upper) }
        return .and([.compare(.greaterOrEqual, value, lower), .compare(.less, value, upper)])
    }
}

/// A range expression whose bounds translate.
private protocol RangeBounds {
    func rangeBounds(in context: inout PredicateTranslationContext) -> (QueryNode, QueryNode, Bool)?
}

extension PredicateExpressions.ClosedRange: RangeBounds {
    fileprivate func rangeBounds(in context: inout PredicateTranslationContext) -> (QueryNode, QueryNode, Bool)? {
        guard let a = context.translate(lower), let b = context.translate(upper) else { return nil }
        return (a, b, true)
    }
}

extension PredicateExpressions.Range: RangeBounds {
    fileprivate func rangeBounds(in context: inout PredicateTranslationContext) -> (QueryNode, QueryNode, Bool)? {
        guard let a = context.translate(lower), let b = context.translate(upper) else { return nil }
        return (a, b, false)
    }
}

extension PredicateExpressions.Value: RangeBounds {
    /// A captured `ClosedRange` or `Range`.
    fileprivate func rangeBounds(in context: inout PredicateTranslationContext) -> (QueryNode, QueryNode, Bool)? {
        guard let range = value as? any RangeValue, let a = context.literal(range.predicateLowerBound),
            let b = context.literal(range.predicateUpperBound)
        else { return nil }
        return (.literal(a), .literal(b), range.predicateIsClosed)
    }
}

extension PredicateValues {
    /// The stored forms of the bounds of a captured `ClosedRange` or `Range`, as
    /// `rangeBounds(in:)` reads them; nil when the value is neither.
    static func rangeBoundLiterals(of value: Any) -> (lower: RecordValue?, upper: RecordValue?)? {
        guard let range = value as? any RangeValue else { return nil }
        return (literal(range.predicateLowerBound), literal(range.predicateUpperBound))
    }
}

private protocol RangeValue {
    var predicateLowerBound: Any { get }
    var predicateUpperBound: Any { get }
    var predicateIsClosed: Bool { get }
}

extension ClosedRange: RangeValue {
    fileprivate var predicateLowerBound: Any { lowerBound }
    fileprivate var predicateUpperBound: Any { upperBound }
    fileprivate var predicateIsClosed: Bool { true }
}

extension Range: RangeValue {
    fileprivate var predicateLowerBound: Any { lowerBound }
    fileprivate var predicateUpperBound: Any { upperBound }
    fileprivate var predicateIsClosed: Bool { false }
}
