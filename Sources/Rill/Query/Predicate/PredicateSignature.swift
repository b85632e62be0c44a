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
    /// in the order the tree is walked, with a mark (`conjunctMark`) where each conjunct starts and
    /// one (`valueMark`) for each captured value.
    private(set) var tags: [Int] = []
    /// The stored form of every captured value, in the order the translator reads them, all the
    /// conjuncts' one after another (`tags` says where each conjunct's values start); nil for a value
    /// that has none. One list, not one for each conjunct: a fetch collects a signature.
    private(set) var values: [RecordValue?] = []
    /// The variables seen, in the order they first appeared: the first few in place, so that a
    /// signature makes no list of them (a fetch's predicate has one or two).
    private var firstVariables:
        (
            PredicateExpressions.VariableID?, PredicateExpressions.VariableID?, PredicateExpressions.VariableID?,
            PredicateExpressions.VariableID?
        ) = (nil, nil, nil, nil)
    private var variableCount = 0
    /// The variables after the first four.
    private var laterVariables: [PredicateExpressions.VariableID] = []

    /// The template this signature is matched against, when it is (`init(_:as:root:matching:)`):
    /// then nothing is collected, each part is compared with the template's as it comes, and each
    /// captured value of a translated conjunct goes to `leaves`.
    private let pattern: SignaturePattern?
    /// Where the match is in the pattern's tags and key paths.
    private var tagPosition = 0
    private var keyPathPosition = 0
    /// The conjunct being matched, and the position of its next captured value.
    private var conjunct = -1
    private var valuePosition = 0
    /// Whether every part so far is the pattern's.
    private var matches = true
    /// The captured values that replace the pattern's stand-ins, in order.
    private var leafValues: [RecordValue] = []

    /// The tag that starts a conjunct.
    private static let conjunctMark = -1
    /// The tag of a captured value.
    private static let valueMark = -2

    /// How many conjuncts the signature has.
    var conjunctCount: Int { tags.reduce(0) { $0 + ($1 == Self.conjunctMark ? 1 : 0) } }

    /// Calls `body` with each conjunct's values, in order.
    func forEachConjunct(_ body: (_ conjunct: Int, _ values: ArraySlice<RecordValue?>) throws -> Void) rethrows {
        var conjunct = -1
        var start = 0
        var end = 0
        for tag in tags {
            if tag == Self.conjunctMark {
                if conjunct >= 0 { try body(conjunct, values[start..<end]) }
                conjunct += 1
                start = end
            } else if tag == Self.valueMark {
                end += 1
            }
        }
        if conjunct >= 0 { try body(conjunct, values[start..<end]) }
    }

    /// The signature of `expression` with `root` as the record's variable, when `expression` is of
    /// `type`: the expression's type as one that collects its signature, found once per type (a
    /// cast to the existential looks up the conformance, every condition of it, at each call).
    ///
    /// Both existentials are opened by the call, and the expression is taken as `type` when the
    /// two types are one: a dynamic cast from `Any` (boxing the expression first) cost a fetch
    /// about a thousand instructions.
    ///
    /// With `pattern`, the signature is matched against it instead of collected (see
    /// `leaves`), so that a fetch whose signature a template has makes no lists of its parts.
    init?<Opened: StandardPredicateExpression<Bool>, Expression: PreparablePredicateExpression>(
        _ expression: Opened, as type: Expression.Type, root: PredicateExpressions.VariableID,
        matching pattern: SignaturePattern? = nil
    ) {
        guard Opened.self == Expression.self else { return nil }
        self.init(unsafeBitCast(expression, to: Expression.self), root: root, pattern: pattern)
    }

    private init(
        _ expression: some PreparablePredicateExpression, root: PredicateExpressions.VariableID,
        pattern: SignaturePattern?
    ) {
        self.pattern = pattern
        if let pattern {
            if pattern.leafCount > 0 { leafValues.reserveCapacity(pattern.leafCount) }
        } else {
            // Room for a predicate of a few conditions, so that the lists grow once at most.
            tags.reserveCapacity(16)
            keyPaths.reserveCapacity(4)
            values.reserveCapacity(4)
        }
        variable(root)
        expression.appendConjuncts(to: &self)
    }

    /// When this signature was matched against a pattern: its captured values as the leaves
    /// that replace the pattern's stand-ins, or nil when the signature is not the pattern's (a
    /// key path, operator or variable reference differs, or a value has no stored form or another
    /// shape). Nil for a collected signature.
    var leaves: PreparedTranslation.Leaves? {
        guard let pattern, matches, tagPosition == pattern.tags.count, keyPathPosition == pattern.keyPaths.count
        else { return nil }
        return PreparedTranslation.Leaves(values: leafValues, starts: pattern.leafStarts)
    }

    /// Whether `other` has the same key paths, operators and variable references.
    func hasSameStructure(as other: PredicateSignature) -> Bool {
        tags == other.tags && keyPaths == other.keyPaths
    }

    /// Whether every captured value has a stored form.
    var hasEveryLiteral: Bool {
        values.allSatisfy { $0 != nil }
    }

    // MARK: - Collecting

    /// Starts the next top-level conjunct.
    mutating func beginConjunct() {
        guard pattern != nil else { return tags.append(Self.conjunctMark) }
        expect(Self.conjunctMark)
        conjunct += 1
        valuePosition = 0
    }

    mutating func keyPath(_ keyPath: AnyKeyPath) {
        guard let pattern else { return keyPaths.append(keyPath) }
        guard matches, keyPathPosition < pattern.keyPaths.count, pattern.keyPaths[keyPathPosition] == keyPath else {
            matches = false
            return
        }
        keyPathPosition += 1
    }

    mutating func tag(_ tag: Int) {
        guard pattern != nil else { return tags.append(tag) }
        expect(tag)
    }

    /// A reference to, or the binding of, `variable`.
    mutating func variable(_ variable: PredicateExpressions.VariableID) {
        let index = index(of: variable)
        guard pattern != nil else { return tags.append(index) }
        expect(index)
    }

    /// Matching: the pattern's next tag is `tag`.
    private mutating func expect(_ tag: Int) {
        guard let pattern, matches, tagPosition < pattern.tags.count, pattern.tags[tagPosition] == tag else {
            matches = false
            return
        }
        tagPosition += 1
    }

    /// The order in which `variable` first appeared, counting it in when it is new.
    private mutating func index(of variable: PredicateExpressions.VariableID) -> Int {
        let inPlace = min(variableCount, 4)
        for index in 0..<inPlace {
            let seen: PredicateExpressions.VariableID? =
                switch index {
                case 0: firstVariables.0
                case 1: firstVariables.1
                case 2: firstVariables.2
                default: firstVariables.3
                }
            if seen == variable { return index }
        }
        if let later = laterVariables.firstIndex(of: variable) { return 4 + later }
        switch variableCount {
        case 0: firstVariables.0 = variable
        case 1: firstVariables.1 = variable
        case 2: firstVariables.2 = variable
        case 3: firstVariables.3 = variable
        default: laterVariables.append(variable)
        }
        variableCount += 1
        return variableCount - 1
    }

    /// A captured value, in the order the translator reads it.
    mutating func literal(_ literal: RecordValue?) {
        guard let pattern else {
            tags.append(Self.valueMark)
            values.append(literal)
            return
        }
        expect(Self.valueMark)
        // The tags matched so far put as many values in each conjunct as the pattern has.
        guard matches, let literal, conjunct >= 0, conjunct < pattern.shapes.count,
            valuePosition < pattern.shapes[conjunct].count, pattern.shapes[conjunct][valuePosition].fits(literal)
        else {
            matches = false
            return
        }
        valuePosition += 1
        if pattern.translated[conjunct] { LiteralShape.appendLeaves(of: literal, to: &leafValues) }
    }
}

/// A template's signature and the shapes of its values, which a fetch's predicate is matched
/// against as its tree is walked (`PredicateSignature.init(_:as:root:matching:)`).
final class SignaturePattern: @unchecked Sendable {
    // Sendable: immutable; its key paths are immutable values.
    /// The template signature's tags and key paths.
    let tags: [Int]
    let keyPaths: [AnyKeyPath]
    /// The translation's shapes of the values, conjunct by conjunct, and which conjuncts were
    /// translated.
    let shapes: [[LiteralShape]]
    let translated: [Bool]
    /// Where each conjunct's leaves start, and how many there are in all.
    let leafStarts: [Int]
    let leafCount: Int

    init(signature: PredicateSignature, translation: PreparedTranslation) {
        tags = signature.tags
        keyPaths = signature.keyPaths
        shapes = translation.shapes
        translated = translation.translated
        leafStarts = translation.leafStarts
        leafCount = zip(shapes, translated).reduce(0) { count, conjunct in
            conjunct.1 ? conjunct.0.reduce(count) { $0 + $1.leafCount } : count
        }
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
