import Foundation

/// An expression whose Foundation evaluation traps or throws on some inputs.
protocol FailingPredicateExpression {}
