import Foundation

/// The state of one translation: what each predicate variable stands for.
///
/// The predicate's own input reads from the record (`.field([])`). The variable of a
/// `contains(where:)` / `allSatisfy` closure reads the current element (`.element([])`), which
/// only refers to it directly inside that closure: a node that reads an element is usable only at
/// the quantifier depth where it was made.
package struct PredicateTranslationContext {
    private struct Binding {
        var variable: PredicateExpressions.VariableID
        var node: QueryNode
        var depth: Int
    }

    /// The variables in scope, innermost last. A predicate has a handful, so a list searched from
    /// the end costs less than a hashed table.
    private var bindings: [Binding]
    private var depth = 0
    /// The family whose records the predicate reads, for `is` and `as?` on the record.
    package var family: FamilyTranslation?
    /// When the translation is being prepared: what stands in for the captured values, and
    /// records them (see `PreparedTranslation`).
    var preparation: TranslationPreparation?

    /// A context whose `root` variable is the record.
    package init(root: PredicateExpressions.VariableID) {
        bindings = [Binding(variable: root, node: .field([]), depth: 0)]
    }

    /// Makes `variable` stand for the record too (the input of a predicate combined into this one).
    package mutating func bindRoot(_ variable: PredicateExpressions.VariableID) {
        bindings.append(Binding(variable: variable, node: .field([]), depth: 0))
    }

    /// Translates any expression, nil when it does not conform to `QueryTranslatable` or has no
    /// equivalent.
    package mutating func translate(_ expression: Any) -> QueryNode? {
        guard let translatable = expression as? any QueryTranslatable else { return nil }
        return translatable.queryNode(in: &self)
    }

    /// The stored form of a captured value, nil for a type without one; when the translation is
    /// being prepared, a stand-in of the same shape.
    mutating func literal<Value>(_ value: Value) -> RecordValue? {
        guard let literal = PredicateValues.literal(value) else { return nil }
        return preparation?.standIn(for: literal) ?? literal
    }

    /// `literal`, a stored value already; when the translation is being prepared, a stand-in of
    /// the same shape.
    mutating func literal(stored literal: RecordValue) -> RecordValue {
        preparation?.standIn(for: literal) ?? literal
    }

    /// What `variable` stands for here, nil when it is unknown or reads an element of another
    /// quantifier.
    package func node(for variable: PredicateExpressions.VariableID) -> QueryNode? {
        guard let binding = bindings.last(where: { $0.variable == variable }) else { return nil }
        if binding.depth != depth && Self.readsElement(binding.node) { return nil }
        return binding.node
    }

    /// Translates the body of a quantifier whose closure variable is `variable`.
    package mutating func translateQuantifierBody(_ body: Any, variable: PredicateExpressions.VariableID) -> QueryNode?
    {
        depth += 1
        defer { depth -= 1 }
        return translate(body, binding: variable, to: .element([]))
    }

    /// Translates `body` with `variable` standing for `node` (at the current depth).
    package mutating func translate(
        _ body: Any, binding variable: PredicateExpressions.VariableID, to node: QueryNode
    ) -> QueryNode? {
        bindings.append(Binding(variable: variable, node: node, depth: depth))
        defer { bindings.removeLast() }
        return translate(body)
    }

    /// Whether `node` reads the current element of a quantifier outside of its own quantifiers'
    /// bodies (so it changes meaning when moved into another quantifier).
    package static func readsElement(_ node: QueryNode) -> Bool {
        switch node {
        case .element:
            return true
        case .field, .literal:
            return false
        case .compare(_, let a, let b), .arithmetic(_, let a, let b), .coalesce(let a, let b),
            .string(_, let a, let b, _):
            return readsElement(a) || readsElement(b)
        case .and(let operands), .or(let operands):
            return operands.contains(where: readsElement)
        case .not(let a), .negate(let a), .count(let a), .any(let a, _), .all(let a, _):
            return readsElement(a)
        case .isIn(let a, let candidates):
            return readsElement(a) || candidates.contains(where: readsElement)
        case .between(let a, let lower, let upper):
            return readsElement(a) || readsElement(lower) || readsElement(upper)
        case .conditional(let condition, let then, let otherwise):
            return readsElement(condition) || readsElement(then) || readsElement(otherwise)
        }
    }
}
