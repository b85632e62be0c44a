import Foundation

/// Options of a string test: `[c]` case-insensitive, `[d]` diacritic-insensitive, `[cd]` both.
package struct QueryStringOptions: OptionSet, Hashable, Sendable {
    package let rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    package static let caseInsensitive = QueryStringOptions(rawValue: 1)
    package static let diacriticInsensitive = QueryStringOptions(rawValue: 2)
}
