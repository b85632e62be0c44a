import RillWorkloads
import Testing

@testable import Rill

/// `SmallKeyedTable` against a `Dictionary` of the same entries, through the switch from its
/// list to its table.
@Suite struct SmallKeyedTableTests {
    @Test func answersAsADictionaryDoes() {
        var random = SeededGenerator(label: "small keyed table")
        for round in 0..<200 {
            var table = SmallKeyedTable<Int>(capacity: Int.random(in: 0..<8, using: &random))
            var oracle: [[UInt8]: Int] = [:]
            var order: [[UInt8]] = []
            // Few distinct keys, so that keys come again; lengths 0 through 3, the empty key too.
            let entries = Int.random(in: 0..<(round.isMultiple(of: 4) ? 60 : 12), using: &random)
            for value in 0..<entries {
                let key = (0..<Int.random(in: 0...3, using: &random)).map { _ in UInt8.random(in: 0...3, using: &random)
                }
                if oracle[key] == nil { order.append(key) }
                oracle[key] = value
                table.set(value, for: key)
                #expect(table.count == oracle.count)
            }
            for first in 0...3 {
                for second in 0...3 {
                    for key in [[], [UInt8(first)], [UInt8(first), UInt8(second)], [UInt8(first), UInt8(second), 1]] {
                        #expect(table[key] == oracle[key], "round \(round), key \(key)")
                        #expect(table.contains(key) == (oracle[key] != nil))
                    }
                }
            }
            #expect(table.orderedKeys == order)
            #expect(table.values == order.map { oracle[$0]! })
        }
    }
}
