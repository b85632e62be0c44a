import Foundation

/// A predicate expression that knows its equivalent in Rill's query form.
///
/// `PredicateExpressions` types conform through extensions; children are reached by casting
/// them to `any QueryTranslatable` (see `PredicateTranslationContext.translate(_:)`).
package protocol QueryTranslatable {
    /// The equivalent node, or nil when this expression (or one of its parts) has no exact
    /// equivalent.
    func queryNode(in context: inout PredicateTranslationContext) -> QueryNode?
}
