import Foundation

/// A value captured by a predicate (a leaf of its tree).
protocol CapturedPredicateValue {}
