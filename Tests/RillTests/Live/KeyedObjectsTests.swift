import Foundation
import Testing

@testable import Rill

/// How far a `KeyedObjects` table's objects sit from their home slots, when the keys arrive in
/// the order another table holds them: as a live query's held keys (taken in its table's slot
/// order) enter the follower's index of holders.
@Suite struct KeyedObjectsTests {
    final class Object: KeyedObject {
        let tableKey: [UInt8]
        init(_ key: [UInt8]) { tableKey = key }
    }

    /// A record key as the store makes them: an entity number, then the identifier's bytes.
    static func key(_ id: Int) -> [UInt8] {
        [0, 0, 0, 1, 0x10] + withUnsafeBytes(of: UInt64(id).bigEndian) { Array($0) }
    }

    @Test func keysTakenFromAnotherTableDoNotPileUp() {
        let first = KeyedObjects<Object>()
        for id in 0..<50_000 { first.insert(Object(Self.key(id))) }
        var inOrder: [Object] = []
        first.forEach { inOrder.append($0) }
        let second = KeyedObjects<Object>()
        // Measured when the table is fullest, just before it grows: keys placed at random in a
        // table three-quarters full take about 2.5 slots a search. Had both tables the same hash
        // function, the second would take its keys in the order of their home slots: those met
        // so far would all sit in the first stretch of its slots, and each new key would probe
        // along all of them.
        var fullest: [(count: Int, probes: Double)] = []
        for object in inOrder {
            second.insert(object)
            if (second.count + 1) * 4 > second.capacity * 3, second.count >= 1_000 {
                fullest.append((second.count, second.meanProbeLength))
            }
        }
        #expect(second.count == 50_000)
        #expect(fullest.count >= 5)
        for (count, probes) in fullest { #expect(probes < 4, "\(count) keys: \(probes) slots a search") }
        #expect(first.meanProbeLength < 4, "\(first.meanProbeLength)")
        for id in stride(from: 0, to: 50_000, by: 997) {
            #expect(second.object(for: Self.key(id))?.tableKey == Self.key(id))
        }
        #expect(second.object(for: Self.key(50_000)) == nil)
    }
}
