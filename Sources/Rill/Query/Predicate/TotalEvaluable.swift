import Foundation

/// An expression that `TotalEvaluation` evaluates itself.
protocol TotalEvaluable {
    /// The expression's value: of its output type, or an `UntypedValue`.
    func totalValue(_ bindings: PredicateBindings) throws -> Any
}
