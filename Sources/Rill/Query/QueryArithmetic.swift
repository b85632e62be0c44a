import Foundation

/// An arithmetic operator.
package enum QueryArithmetic: String, Hashable, Sendable, CaseIterable {
    case add = "+"
    case subtract = "-"
    case multiply = "*"
    case divide = "/"
    case remainder = "%"
}
