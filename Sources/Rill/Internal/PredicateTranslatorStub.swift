import Foundation

// TEMPORARY until the predicate translator lands: translates nothing.
package struct PredicateTranslation: Sendable {
    package var node: QueryNode?
    package var isComplete: Bool
    package var untranslated: [String]
}
package enum PredicateTranslator {
    package static func translate<T>(_ predicate: Predicate<T>) -> PredicateTranslation {
        PredicateTranslation(node: nil, isComplete: false, untranslated: ["(translation not available)"])
    }
}
