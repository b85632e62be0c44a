import Foundation

/// A range of index keys: `lower` included, `upper` excluded (nil: to the end).
package struct KeyRange: Hashable, Sendable {
    package var lower: [UInt8]
    package var upper: [UInt8]?
}
