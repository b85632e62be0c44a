import Foundation

/// A string test.
package enum QueryStringTest: String, Hashable, Sendable, CaseIterable {
    case contains
    case beginsWith = "beginswith"
    case endsWith = "endswith"
    /// Wildcards: `*` any run of characters, `?` one character.
    case like
}
