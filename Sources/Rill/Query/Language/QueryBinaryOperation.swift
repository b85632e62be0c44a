import Foundation

/// A binary operator on values, by precedence.
enum QueryBinaryOperation {
    case coalesce
    case arithmetic(QueryArithmetic)

    var precedence: Int {
        switch self {
        case .coalesce: 1
        case .arithmetic(.add), .arithmetic(.subtract): 2
        case .arithmetic: 3
        }
    }

    /// Whether this operator, already on the stack, applies before `next` is pushed.
    func reducesBefore(_ next: QueryBinaryOperation) -> Bool {
        if case .coalesce = self, case .coalesce = next { return false }
        return precedence >= next.precedence
    }
}
