import Foundation
import RillWorkloads
import Testing

@testable import Rill

/// The table of a live query's held rows against a `Dictionary` doing the same, through random
/// inserts, replacements and removals that grow and shrink it, with keys that collide in a small
/// table; and rows are released once the table lets go of them.
@Suite struct HeldRowsTests {
    final class Row: LiveEntry, @unchecked Sendable {
        let value: Int
        let freed: Counter
        init(key: [UInt8], value: Int, freed: Counter) {
            self.value = value
            self.freed = freed
            super.init(key: key, order: nil)
        }
        deinit { freed.count += 1 }
    }

    final class Counter: @unchecked Sendable {
        var count = 0
    }

    @Test func randomOperationsMatchADictionary() {
        var random = SeededGenerator(label: "held rows")
        let freed = Counter()
        var made = 0
        do {
            let table = HeldRows()
            var oracle: [[UInt8]: Int] = [:]
            for round in 0..<40_000 {
                // The key space grows, then shrinks: the table grows and shrinks with it.
                let space = round < 20_000 ? 1 + round / 8 : max(1, (40_000 - round) / 8)
                let id = Int.random(in: 0..<space, using: &random)
                // Keys of different lengths, some empty, some sharing prefixes.
                let key: [UInt8] = id == 0 ? [] : Array(String(id, radix: 7).utf8) + (id % 3 == 0 ? [0] : [])
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<5:
                    let value = Int.random(in: 0..<1_000_000, using: &random)
                    made += 1
                    let old = table.insert(Row(key: key, value: value, freed: freed))
                    #expect((old as? Row)?.value == oracle[key], "round \(round): replaced \(key)")
                    oracle[key] = value
                case 5..<8:
                    let removed = table.remove(key)
                    #expect(
                        (removed as? Row)?.value == oracle.removeValue(forKey: key), "round \(round): removed \(key)")
                default:
                    // Room made ahead now and then, more or less than held.
                    if round % 1_000 == 9 { table.reserveCapacity(Int.random(in: 0...6_000, using: &random)) }
                    #expect((table[key] as? Row)?.value == oracle[key], "round \(round): looked up \(key)")
                }
                #expect(table.count == oracle.count)
                if round % 4_999 == 0 {
                    // Every key of the oracle is found, and the table holds nothing else.
                    for (key, value) in oracle {
                        #expect((table[key] as? Row)?.value == value, "round \(round): \(key)")
                    }
                    #expect(table.rows.count == oracle.count)
                    #expect(Set(table.rows.map(\.key)) == Set(oracle.keys))
                }
            }
            let rest = table.removeAll()
            #expect(rest.count == oracle.count)
            #expect(table.isEmpty)
            #expect(table[[1]] == nil)
            _ = table.insert(Row(key: [1], value: 1, freed: freed))
            made += 1
        }
        // Every row made was released: by its replacement, its removal, or the table's end.
        #expect(freed.count == made)
    }
}
