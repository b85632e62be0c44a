import Foundation
import RillWorkloads
import Testing

@testable import Rill

/// `StorageHeader` reads the counts of arrays and dictionaries of any element types, in code
/// generic over them, as `count` and `isEmpty` give them; its empty dictionary is one like any
/// other.
@Suite struct StorageHeaderTests {
    final class Box {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    struct Wide: Equatable {
        var text: String
        var numbers: (Int, Int, Int)
        static func == (lhs: Wide, rhs: Wide) -> Bool { lhs.text == rhs.text && lhs.numbers == rhs.numbers }
    }

    /// Through an unspecialized generic function, as a fetch reads them.
    @inline(never)
    static func counts<Element>(_ array: [Element]) -> (header: Int, count: Int) {
        (StorageHeader.count(of: array), array.count)
    }

    @inline(never)
    static func emptiness<Key, Value>(_ dictionary: [Key: Value]) -> (header: Bool, isEmpty: Bool) {
        (StorageHeader.isEmpty(dictionary), dictionary.isEmpty)
    }

    @Test func countsAreTheArraysAndDictionariesOwn() {
        var random = SeededGenerator(label: "storage header")
        for _ in 0..<200 {
            let count = Int.random(in: 0...40, using: &random)
            var boxes = (0..<count).map { Box($0) }
            var wides = (0..<count).map { Wide(text: "w\($0)", numbers: ($0, -$0, 7)) }
            var keyPaths: [PartialKeyPath<Wide>] = (0..<count).map { _ in \Wide.text }
            let counts = [
                Self.counts(boxes), Self.counts(wides), Self.counts(keyPaths), Self.counts(Array(boxes[...])),
            ]
            for (header, expected) in counts { #expect(header == expected && header == count) }
            boxes.removeAll(keepingCapacity: true)
            wides.append(Wide(text: "more", numbers: (1, 2, 3)))
            keyPaths = []
            #expect(Self.counts(boxes) == (0, 0))
            #expect(Self.counts(wides) == (count + 1, count + 1))
            #expect(Self.counts(keyPaths) == (0, 0))

            var dictionary: [[UInt8]: Box?] = [:]
            for key in 0..<count { dictionary[[UInt8(key)]] = Bool.random(using: &random) ? Box(key) : .some(nil) }
            let (header, isEmpty) = Self.emptiness(dictionary)
            #expect(header == isEmpty && header == (count == 0))
            dictionary.removeAll()
            #expect(Self.emptiness(dictionary) == (true, true))
        }
    }

    @Test func theEmptyDictionaryIsOneLikeAnyOther() {
        var staged: [[UInt8]: Box?] = StorageHeader.emptyDictionary()
        #expect(staged.isEmpty && staged.count == 0 && staged[[1]] == nil && StorageHeader.isEmpty(staged))
        #expect(staged.values.contains { $0 != nil } == false)
        staged[[1]] = Box(1)
        staged[[2]] = .some(nil)
        #expect(staged.count == 2 && staged[[1]]??.value == 1 && !StorageHeader.isEmpty(staged))
        let other: [String: Wide] = StorageHeader.emptyDictionary()
        #expect(other.isEmpty && other["x"] == nil)
        // The shared empty storage is untouched by the inserts above.
        let again: [[UInt8]: Box?] = StorageHeader.emptyDictionary()
        #expect(again.isEmpty)
    }
}
