import Foundation

/// A value captured by a predicate (a leaf of its tree).
protocol CapturedPredicateValue {}

/// A captured number a predicate negates (`$0.balance < -limit`, `-100`): the negation is one
/// literal, so that a comparison with it can be served by an index as any literal's is.
protocol NegatedCapturedValue {
    /// The stored form of the captured value's negation; nil when it has none (`Int64.min`,
    /// whose negation overflows, stays an evaluated negation).
    var negatedLiteral: RecordValue? { get }
}

extension PredicateExpressions.Value: NegatedCapturedValue {
    var negatedLiteral: RecordValue? {
        switch PredicateValues.literal(value) {
        case .int(let number)? where number != .min: .int(-number)
        case .double(let number)?: .double(-number)
        default: nil
        }
    }
}
