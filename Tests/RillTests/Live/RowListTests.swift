import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// The row list against an array: random inserts, removals and truncations across many
/// chunks, and shared copies (snapshots) that must not change when the list does.
@Suite struct RowListTests {
    /// A row whose order key is `value`, big-endian.
    private static func row(_ value: Int) -> LiveEntry {
        let bytes = withUnsafeBytes(of: UInt64(value).bigEndian) { Array($0) }
        return LiveEntry(key: bytes, order: bytes)
    }

    private static func values(_ list: RowList) -> [[UInt8]] { (0..<list.count).map { list[$0].key } }

    @Test func randomEditsMatchAnArray() {
        var random = SeededGenerator(label: "row list")
        var list = RowList()
        var array: [LiveEntry] = []
        // Every row ever made stays alive here: the list holds rows unretained.
        var rows: [LiveEntry] = []
        var version = LiveVersion()
        var snapshots: [(list: RowList, keys: [[UInt8]], version: LiveVersion)] = []
        for step in 0..<20_000 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<6:
                let position = Int.random(in: 0...array.count, using: &random)
                let row = Self.row(step)
                rows.append(row)
                list.insert(row, at: position, retiring: version)
                array.insert(row, at: position)
            case 6..<9 where !array.isEmpty:
                let position = Int.random(in: 0..<array.count, using: &random)
                #expect(list.remove(at: position, retiring: version) === array.remove(at: position))
            case 9 where Int.random(in: 0..<50, using: &random) == 0:
                let count = Int.random(in: 0...array.count, using: &random)
                list.truncate(to: count, retiring: version)
                array.removeSubrange(count...)
            default:
                break
            }
            if step % 97 == 0 {
                // As a live query takes a snapshot: chunks let go of from now on go into the
                // next version, which the snapshot keeps alive.
                let next = LiveVersion()
                version.next = next
                version = next
                snapshots.append((list.share(), array.map(\.key), next))
                // Most snapshots are dropped soon, as most results are; their chunks are freed.
                if snapshots.count > 8, Bool.random(using: &random) {
                    snapshots.remove(at: Int.random(in: 0..<(snapshots.count - 4), using: &random))
                }
            }
        }
        #expect(list.count == array.count)
        #expect(Self.values(list) == array.map(\.key))
        #expect(list.last === array.last)
        for snapshot in snapshots { #expect(Self.values(snapshot.list) == snapshot.keys) }
        let built = RowList(array)
        #expect(Self.values(built) == array.map(\.key))
        var ended = built
        ended.retireAll(into: version)
        list.retireAll(into: version)
        #expect(list.count == 0)
        withExtendedLifetime(rows) {}
    }

    @Test func partitionPointFindsTheFirstRowNotBefore() {
        let rows = stride(from: 0, to: 10_000, by: 2).map(Self.row)
        var list = RowList(rows)
        let precedes = { (lhs: LiveEntry, rhs: LiveEntry) in lhs.order!.lexicographicallyPrecedes(rhs.order!) }
        for probe in [0, 1, 2, 511, 512, 4_097, 9_998, 9_999, 10_000] {
            let expected = rows.firstIndex { !precedes($0, Self.row(probe)) } ?? rows.count
            #expect(list.partitionPoint(before: Self.row(probe), precedes) == expected, "probe \(probe)")
        }
        list.retireAll(into: LiveVersion())
    }
}
