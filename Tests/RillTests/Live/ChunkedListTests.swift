import RillTestSupport
import Testing

@testable import Rill

/// The chunked list against an array: random inserts, removals and truncations across many
/// chunks, and snapshots that must not change when the list does.
@Suite struct ChunkedListTests {
    @Test func randomEditsMatchAnArray() {
        var random = SeededGenerator(label: "chunked list")
        var list = ChunkedList<Int>()
        var array: [Int] = []
        var snapshots: [(ChunkedList<Int>, [Int])] = []
        for step in 0..<20_000 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<6:
                let position = Int.random(in: 0...array.count, using: &random)
                list.insert(step, at: position)
                array.insert(step, at: position)
            case 6..<9 where !array.isEmpty:
                let position = Int.random(in: 0..<array.count, using: &random)
                #expect(list.remove(at: position) == array.remove(at: position))
            case 9 where Int.random(in: 0..<50, using: &random) == 0:
                let count = Int.random(in: 0...array.count, using: &random)
                list.truncate(to: count)
                array.removeSubrange(count...)
            default:
                break
            }
            if step % 997 == 0 { snapshots.append((list, array)) }
        }
        #expect(list.count == array.count)
        #expect(Array(list) == array)
        for (snapshot, copy) in snapshots { #expect(Array(snapshot) == copy) }
        let built = ChunkedList(array)
        #expect(Array(built) == array)
    }

    @Test func partitionPointFindsTheFirstElementNotBefore() {
        let sorted = ChunkedList(stride(from: 0, to: 10_000, by: 2))
        for probe in [-1, 0, 1, 2, 511, 512, 4_097, 9_998, 9_999, 10_000] {
            let expected = (0..<sorted.count).first { sorted[$0] >= probe } ?? sorted.count
            #expect(sorted.partitionPoint { $0 < probe } == expected, "probe \(probe)")
        }
    }
}
