import Foundation

// Variables, values, comparisons and logic.

extension PredicateExpressions.Variable: QueryTranslatable {
    /// The equivalent query node; nil when there is none.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        context.node(for: key)
    }
}

extension PredicateExpressions.KeyPath: QueryTranslatable {
    /// The equivalent query node; nil when there is none.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        guard let base = context.translate(root) else { return nil }
        let path = keyPath as AnyKeyPath
        // Through a relationship, a predicate reads other records: only a reference's own
        // identifier is in this one (where the reference is stored).
        switch KeyPathNames.relationshipRead(of: path, root: Root.Output.self) {
        case .none: break
        case .identifier: return base
        case .otherRecord: return nil
        }
        switch KeyPathNames.measure(of: path, root: Root.Output.self) {
        case .count: return .count(base)
        case .isEmpty: return .compare(.equal, .count(base), .literal(.int(0)))
        case nil: break
        }
        var names = KeyPathNames.names(of: path, root: Root.Output.self)
        // A key path with no name to read, on the record of a family (a requirement of its base,
        // a computed property of a kind): the field the kinds' probes find it reading.
        if names == nil, case .field([]) = base { names = context.family?.fieldPath(of: path, root: Root.Output.self) }
        guard let names else { return nil }
        switch base {
        case .field(let prefix): return .field(prefix + names)
        case .element(let prefix): return .element(prefix + names)
        default: return nil
        }
    }
}

extension PredicateExpressions.Value: QueryTranslatable {
    /// The equivalent query node; nil when there is none.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        context.literal(value).map { .literal($0) }
    }
}

extension PredicateExpressions.NilLiteral: QueryTranslatable {
    /// The equivalent query node; nil when there is none.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        .literal(.null)
    }
}

extension PredicateExpressions.Equal: QueryTranslatable {
    /// The equivalent query node; nil when there is none.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        guard PredicateValues.supportsEquality(LHS.Output.self),
            let a = context.translate(lhs), let b = context.translate(rhs)
        else { return nil }
        return .compare(.equal, a, b)
    }
}

extension PredicateExpressions.NotEqual: QueryTranslatable {
    /// The equivalent query node; nil when there is none.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        guard PredicateValues.supportsEquality(LHS.Output.self),
            let a = context.translate(lhs), let b = context.translate(rhs)
        else { return nil }
        return .compare(.notEqual, a, b)
    }
}

extension PredicateExpressions.Comparison: QueryTranslatable {
    /// The equivalent query node; nil when there is none.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        guard PredicateValues.supportsOrdering(LHS.Output.self),
            let a = context.translate(lhs), let b = context.translate(rhs)
        else { return nil }
        let comparison: QueryComparison
        switch op {
        case .lessThan: comparison = .less
        case .lessThanOrEqual: comparison = .lessOrEqual
        case .greaterThan: comparison = .greater
        case .greaterThanOrEqual: comparison = .greaterOrEqual
        }
        return .compare(comparison, a, b)
    }
}

extension PredicateExpressions.Conjunction: QueryTranslatable {
    /// The equivalent query node; nil when there is none.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        guard let a = context.translate(lhs), let b = context.translate(rhs) else { return nil }
        return .and(Self.operands(of: a) + Self.operands(of: b))
    }

    private static func operands(of node: QueryNode) -> [QueryNode] {
        if case .and(let operands) = node { return operands }
        return [node]
    }
}

extension PredicateExpressions.Disjunction: QueryTranslatable {
    /// The equivalent query node; nil when there is none.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        guard let a = context.translate(lhs), let b = context.translate(rhs) else { return nil }
        return .or(Self.operands(of: a) + Self.operands(of: b))
    }

    private static func operands(of node: QueryNode) -> [QueryNode] {
        if case .or(let operands) = node { return operands }
        return [node]
    }
}

extension PredicateExpressions.Negation: QueryTranslatable {
    /// The equivalent query node; nil when there is none.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        context.translate(wrapped).map { .not($0) }
    }
}

extension PredicateExpressions.Conditional: QueryTranslatable {
    /// The equivalent query node; nil when there is none.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        guard let condition = context.translate(test), let then = context.translate(trueBranch),
            let otherwise = context.translate(falseBranch)
        else { return nil }
        return .conditional(condition, then: then, otherwise: otherwise)
    }
}
