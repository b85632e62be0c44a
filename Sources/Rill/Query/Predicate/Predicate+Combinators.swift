import Foundation

// `#Predicate` cannot call another predicate (`other.evaluate($0)` is rejected by the macro), so
// predicates are combined as values: `byAuthor && !isRead`. The result is an ordinary
// `Predicate`, evaluated by Foundation, translated and index-served like any other.

/// A predicate that holds when both hold.
///
/// For example:
///
/// ```swift
/// let unread = #Predicate<Book> { !$0.isRead }
/// let long = #Predicate<Book> { $0.pages > 300 }
/// let descriptor = FetchDescriptor(predicate: unread && long)
/// ```
public func && <Input>(lhs: Predicate<Input>, rhs: Predicate<Input>) -> Predicate<Input> {
    Predicate<Input> { input in
        PredicateExpressions.Conjunction(
            lhs: PredicateApplication(predicate: lhs, input: input),
            rhs: PredicateApplication(predicate: rhs, input: input))
    }
}

/// A predicate that holds when either holds.
public func || <Input>(lhs: Predicate<Input>, rhs: Predicate<Input>) -> Predicate<Input> {
    Predicate<Input> { input in
        PredicateExpressions.Disjunction(
            lhs: PredicateApplication(predicate: lhs, input: input),
            rhs: PredicateApplication(predicate: rhs, input: input))
    }
}

/// A predicate that holds when `predicate` does not.
public prefix func ! <Input>(predicate: Predicate<Input>) -> Predicate<Input> {
    Predicate<Input> { input in
        PredicateExpressions.Negation(PredicateApplication(predicate: predicate, input: input))
    }
}

/// A whole predicate applied to the input of the predicate that contains it.
struct PredicateApplication<Input>: StandardPredicateExpression {
    typealias Output = Bool

    let predicate: Predicate<Input>
    let input: PredicateExpressions.Variable<Input>

    func evaluate(_ bindings: PredicateBindings) throws -> Bool {
        try predicate.evaluate(try input.evaluate(bindings))
    }

    // A `Predicate` is only codable with a configuration, so a combined predicate cannot be
    // encoded; the conformance exists because predicate expressions must declare it.
    init(predicate: Predicate<Input>, input: PredicateExpressions.Variable<Input>) {
        self.predicate = predicate
        self.input = input
    }

    init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(
            .init(codingPath: decoder.codingPath, debugDescription: "a combined predicate cannot be decoded"))
    }

    func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(
            predicate,
            .init(codingPath: encoder.codingPath, debugDescription: "a combined predicate cannot be encoded"))
    }
}

extension PredicateApplication: QueryTranslatable {
    /// The inner predicate's translation, with its variable standing for this input.
    func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        guard let node = context.node(for: input.key) else { return nil }
        return context.translate(predicate.expression, binding: predicate.variable.key, to: node)
    }
}
