import Foundation

/// A predicate applied to a variable (how combined predicates hold their parts).
protocol AppliedPredicate {
    var innerExpression: Any { get }
    var innerVariable: PredicateExpressions.VariableID { get }
    var inputVariable: PredicateExpressions.VariableID { get }
}

extension PredicateApplication: AppliedPredicate {
    var innerExpression: Any { predicate.expression }
    var innerVariable: PredicateExpressions.VariableID { predicate.variable.key }
    var inputVariable: PredicateExpressions.VariableID { input.key }
}
