import Foundation

/// What could be made of a `#Predicate` in Rill's query form.
///
/// When `isComplete`, `node` matches exactly the records the predicate accepts. Otherwise
/// `node` (if any) is a necessary condition: every record the predicate accepts matches it,
/// and the predicate itself must still be evaluated on the candidates.
package struct PredicateTranslation: Sendable {
    /// The translated condition; nil when no part of the predicate could be translated.
    package var node: QueryNode?
    /// Whether `node` is equivalent to the whole predicate.
    package var isComplete: Bool
    /// Descriptions of the top-level conjuncts that were left out.
    package var untranslated: [String]

    /// A translation made of its parts.
    package init(node: QueryNode?, isComplete: Bool, untranslated: [String]) {
        self.node = node
        self.isComplete = isComplete
        self.untranslated = untranslated
    }
}
