import Foundation

/// What tells apart two predicates whose expressions are of one type, and the values they capture:
/// the parts of a predicate that its expression's type leaves open.
///
/// A `#Predicate`'s expression type spells out its whole tree (`Equal<KeyPath<Variable<Book>,
/// Int>, Value<Int>>`), but not what the tree's nodes hold: the key paths it reads, the operators
/// of its comparisons and arithmetic, which variable each reference names, and the values it
/// captures. Two predicates of one expression type with the same key paths, operators and
/// variable references, and captured values of the same shape, translate to the same query form
/// with only their values in different places: that is what lets a translation be prepared once
/// and bound to each new predicate's values (`PreparedTranslation`).
///
/// Collected by the expression's own nodes (`PreparablePredicateExpression`), conjunct by
/// conjunct: a top-level AND's operands, at any depth, are each translated on their own.
struct PredicateSignature: @unchecked Sendable {
    // Sendable: its key paths are immutable values; the rest is Sendable.
    /// The key paths of the tree, in the order it is walked.
    private(set) var keyPaths: [AnyKeyPath] = []
    /// Operators and variable references (each variable by the order in which it first appears),
    /// in the order the tree is walked, with a mark between conjuncts.
    private(set) var tags: [Int] = []
    /// The stored form of every captured value, conjunct by conjunct, in the order the
    /// translator reads them; nil for a value that has none.
    private(set) var literals: [[RecordValue?]] = []
    /// The variables seen, in the order they first appeared.
    private var variables: [PredicateExpressions.VariableID] = []

    /// The signature of `expression` with `root` as the record's variable, when `expression` is of
    /// `type`: the expression's type as one that collects its signature, found once per type (a
    /// cast to the existential looks up the conformance, every condition of it, at each call).
    init?<Expression: PreparablePredicateExpression>(
        _ expression: Any, as type: Expression.Type, root: PredicateExpressions.VariableID
    ) {
        guard let expression = expression as? Expression else { return nil }
        self.init(expression, root: root)
    }

    private init(_ expression: some PreparablePredicateExpression, root: PredicateExpressions.VariableID) {
        // Room for a predicate of a few conditions, so that the lists grow once at most.
        tags.reserveCapacity(16)
        keyPaths.reserveCapacity(4)
        literals.reserveCapacity(4)
        variables.reserveCapacity(4)
        variable(root)
        expression.appendConjuncts(to: &self)
    }

    /// Whether `other` has the same key paths, operators and variable references.
    func hasSameStructure(as other: PredicateSignature) -> Bool {
        tags == other.tags && keyPaths == other.keyPaths
    }

    /// Whether every captured value has a stored form.
    var hasEveryLiteral: Bool {
        literals.allSatisfy { conjunct in conjunct.allSatisfy { $0 != nil } }
    }

    // MARK: - Collecting

    /// Starts the next top-level conjunct.
    mutating func beginConjunct() {
        tags.append(-1)
        literals.append([])
    }

    mutating func keyPath(_ keyPath: AnyKeyPath) {
        keyPaths.append(keyPath)
    }

    mutating func tag(_ tag: Int) {
        tags.append(tag)
    }

    /// A reference to, or the binding of, `variable`.
    mutating func variable(_ variable: PredicateExpressions.VariableID) {
        if let index = variables.firstIndex(of: variable) {
            tags.append(index)
        } else {
            tags.append(variables.count)
            variables.append(variable)
        }
    }

    /// A captured value, in the order the translator reads it.
    mutating func literal(_ literal: RecordValue?) {
        literals[literals.count - 1].append(literal)
    }
}

/// A predicate expression that appends to a `PredicateSignature` everything of it its type
/// leaves open, and then its children's, in the order the translator walks them.
///
/// The conformances are conditional on the children's: a tree conforms only when every node of
/// it does, so that one cast of the root decides whether a predicate can be prepared. A node of
/// any other type (a builder Rill does not translate, a combined predicate, whose parts' types
/// its own type hides) leaves the predicate to be translated anew at each fetch.
protocol PreparablePredicateExpression {
    /// Appends this node's parts and its children's.
    func appendSignature(to signature: inout PredicateSignature)
    /// Appends this node as top-level conjuncts: one, unless it is an AND.
    func appendConjuncts(to signature: inout PredicateSignature)
}

extension PreparablePredicateExpression {
    func appendConjuncts(to signature: inout PredicateSignature) {
        signature.beginConjunct()
        appendSignature(to: &signature)
    }
}

/// The bounds of a range expression, for `RangeExpressionContains`.
protocol PreparableRangeBounds {
    func appendBounds(to signature: inout PredicateSignature)
}
