import Foundation
import RillWorkloads
import Testing

@testable import Rill

/// The follower's table of holders against a `Dictionary` of sets doing the same, through random
/// additions and removals, one at a time and in batches, over keys that grow and shrink in number
/// (keys of 0 to 21 bytes: held in the slots, and past 16 bytes in arrays of their own).
@Suite struct HolderIndexTests {
    @Test func randomOperationsMatchADictionaryOfSets() {
        var random = SeededGenerator(label: "holder index")
        let index = HolderIndex()
        var oracle: [[UInt8]: Set<Int32>] = [:]
        func key(_ id: Int) -> [UInt8] {
            // Keys of different lengths, one empty, some sharing prefixes, some past 16 bytes.
            id == 0 ? [] : Array(String(id, radix: 5).utf8) + (id % 4 == 0 ? [UInt8](repeating: 9, count: 14) : [])
        }
        for round in 0..<30_000 {
            let space = round < 15_000 ? 1 + round / 6 : max(1, (30_000 - round) / 6)
            let id = Int32.random(in: 0..<8, using: &random)
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<4:
                // A holder enters a record once, as a query holds a row once.
                let record = key(Int.random(in: 0..<space, using: &random))
                guard oracle[record]?.contains(id) != true else { continue }
                index.add(record, id)
                oracle[record, default: []].insert(id)
            case 4:
                // Batches longer than `add`'s pipeline, whose steps run some rows ahead.
                let records = Set(
                    (0..<Int.random(in: 0...60, using: &random)).map { _ in
                        key(Int.random(in: 0..<space, using: &random))
                    }
                ).filter { oracle[$0]?.contains(id) != true }
                index.add(Self.held(records), id)
                for record in records { oracle[record, default: []].insert(id) }
            case 5..<8:
                let record = key(Int.random(in: 0..<space, using: &random))
                index.remove(record, id)
                oracle[record]?.remove(id)
                if oracle[record]?.isEmpty == true { oracle[record] = nil }
            case 8:
                let records = (0..<Int.random(in: 0...20, using: &random)).map { _ in
                    key(Int.random(in: 0..<space, using: &random))
                }
                index.remove(Set(records), id)
                for record in Set(records) {
                    oracle[record]?.remove(id)
                    if oracle[record]?.isEmpty == true { oracle[record] = nil }
                }
            default:
                let record = key(Int.random(in: 0..<space, using: &random))
                #expect(Set(index.holders(of: record)) == oracle[record] ?? [], "round \(round): \(record)")
                #expect(index.holders(of: record).count == oracle[record]?.count ?? 0)
            }
            if round % 4_999 == 0 {
                #expect(index.recordCount == oracle.count, "round \(round)")
                for (record, ids) in oracle {
                    #expect(Set(index.holders(of: record)) == ids, "round \(round): \(record)")
                }
            }
        }
    }

    /// The prefetch hints of `HolderIndex.add` read an array's count and find its elements at
    /// fixed offsets of its storage: the layout they assume must be the standard library's.
    @Test func arrayStorageLayoutIsTheOneThePrefetchesAssume() {
        for count in [1, 2, 7, 43] {
            var ids = [Int32](0..<Int32(count))
            ids.reserveCapacity(count * 2)
            let storage = withUnsafeBytes(of: ids) { $0.load(as: UnsafeRawPointer.self) }
            #expect(storage.load(fromByteOffset: HolderIndex.arrayCountOffset, as: Int.self) == count)
            ids.withUnsafeBufferPointer { elements in
                #expect(UnsafeRawPointer(elements.baseAddress!) == storage + HolderIndex.arrayElementsOffset)
            }
        }
    }

    /// Emptied by removals, the table starts its lists again from nothing and stays exact.
    @Test func drainedAndRefilledStaysExact() {
        let index = HolderIndex()
        let keys = (0..<3_000).map { Array("record \($0)".utf8) + ($0 % 3 == 0 ? Array(repeating: 7, count: 12) : []) }
        for round in 0..<3 {
            for id in Int32(0)..<40 {
                index.add(Self.held(keys.enumerated().filter { $0.offset % 40 >= Int(id) }.map(\.element)), id)
            }
            for (offset, key) in keys.enumerated() {
                #expect(Set(index.holders(of: key)) == Set(Int32(0)...Int32(offset % 40)), "round \(round)")
            }
            // Removed in another order than entered: every other holder first.
            for id in stride(from: Int32(0), to: 40, by: 2) { index.remove(keys, id) }
            for id in stride(from: Int32(1), to: 40, by: 2) { index.remove(keys, id) }
            #expect(index.recordCount == 0)
            #expect(index.holders(of: keys[0]).isEmpty)
        }
    }

    /// A query's held rows of the records `keys`, as a query enters them all at once.
    private static func held(_ keys: some Sequence<[UInt8]>) -> HeldRows {
        let rows = HeldRows()
        for key in keys { rows.insert(LiveEntry(key: key, order: nil)) }
        return rows
    }
}
