import Foundation
import RillWorkloads
import Testing

@testable import Rill

/// Rows sorted by their order keys' sixteen-byte prefixes, then whole keys, against the rows
/// sorted by comparing the whole keys (`memcmp` order): random keys of every length from empty to
/// forty bytes, few byte values (so that keys share long prefixes and hold zeros), and keys that
/// are prefixes of others; and the same rows given in order, and with one pair swapped.
@Suite struct OrderKeySortTests {
    @Test func prefixSortIsTheWholeKeysOrder() {
        var random = SeededGenerator(label: "order key sort")
        for round in 0..<300 {
            let alphabet: [UInt8] = round.isMultiple(of: 2) ? [0, 1, 0xFF] : [0, 0x7F, 0x80, 0xFE, 0xFF]
            var keys: [[UInt8]] = (0..<Int.random(in: 0...200, using: &random)).map { _ in
                (0..<Int.random(in: 0...40, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
            }
            // Keys that are prefixes of others, and equal keys.
            for _ in 0..<min(keys.count, 20) {
                let key = keys.randomElement(using: &random)!
                keys.append(Array(key.prefix(Int.random(in: 0...key.count, using: &random))))
            }
            let rows = keys.map { LiveEntry(key: [], order: $0) }
            let sortedRows = LiveEntry.sortedByOrder(rows)
            let sorted = sortedRows.map { $0.order! }
            let expected = keys.sorted { OrderKey.precedes($0, $1) }
            #expect(sorted == expected, "round \(round)")
            // The rows are moved into their places: each of them once, none lost or repeated.
            #expect(sortedRows.count == rows.count)
            #expect(Set(sortedRows.map(ObjectIdentifier.init)) == Set(rows.map(ObjectIdentifier.init)))
            // Rows in order already are returned as they are; one pair out of order is not.
            let ordered = expected.map { LiveEntry(key: [], order: $0) }
            #expect(LiveEntry.sortedByOrder(ordered).map { $0.order! } == expected, "round \(round)")
            if expected.count > 1 {
                var swapped = expected
                let at = Int.random(in: 1..<swapped.count, using: &random)
                swapped.swapAt(at - 1, at)
                let rows = swapped.map { LiveEntry(key: [], order: $0) }
                #expect(LiveEntry.sortedByOrder(rows).map { $0.order! } == expected, "round \(round)")
            }
        }
    }
}
