import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Sets and dictionaries encode their elements in their hash tables' order, which differs between
/// equal values (built in another order, with another capacity, in another run): their records
/// must not, or a save of an unchanged model is recorded as a change, live queries report it as an
/// update and history shows an update with equal values.
@Suite struct UnorderedCollectionTests {
    let directory = TemporaryDirectory()

    struct Point: Codable, Hashable, Sendable {
        var x: Int
        var label: String
    }

    struct Bag: PersistentModel, Equatable {
        var id: Int
        var tags: Set<String>
        var counts: [String: Int]
        var byNumber: [Int: String]
        var byUUID: [UUID: Double]
        var nested: [String: Set<Int>]
        var sets: Set<Set<Int>>
        var points: Set<Point>
        var maybe: [String: Bool]?
    }

    /// A bag of random contents, and an equal one whose collections were built in another order
    /// and with other capacities.
    static func bags(id: Int, using random: inout SeededGenerator) -> (Bag, Bag) {
        let salt = UInt8.random(in: 0...255, using: &random)
        func uuid(_ index: Int) -> UUID {
            UUID(uuid: (UInt8(index), salt, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        }
        let tags = (0..<Int.random(in: 0...30, using: &random)).map { "t\($0 * 7 % 31)" }
        let counts = (0..<Int.random(in: 0...30, using: &random)).map {
            ("k\($0)", Int.random(in: -5...5, using: &random))
        }
        let numbers = (0..<Int.random(in: 0...20, using: &random)).map { ($0 * 13 - 50, "v\($0)") }
        let uuids = (0..<Int.random(in: 0...20, using: &random)).map { (uuid($0), Double($0)) }
        let nested = (0..<Int.random(in: 0...6, using: &random)).map { ("n\($0)", Set(0..<$0 * 3)) }
        let sets = (0..<Int.random(in: 0...6, using: &random)).map { Set(($0 * 2)..<($0 * 2 + $0 + 1)) }
        let points = (0..<Int.random(in: 0...12, using: &random)).map { Point(x: $0, label: "p\($0 % 3)") }
        func build(_ forward: Bool) -> Bag {
            func order<E>(_ items: [E]) -> [E] { forward ? items : items.reversed() }
            var tagSet = Set<String>(minimumCapacity: forward ? 0 : 500)
            tagSet.formUnion(order(tags))
            var countMap = [String: Int](minimumCapacity: forward ? 0 : 300)
            for (key, value) in order(counts) { countMap[key] = value }
            var numberMap = [Int: String](minimumCapacity: forward ? 0 : 300)
            for (key, value) in order(numbers) { numberMap[key] = value }
            var uuidMap = [UUID: Double](minimumCapacity: forward ? 0 : 300)
            for (key, value) in order(uuids) { uuidMap[key] = value }
            var nestedMap = [String: Set<Int>]()
            for (key, value) in order(nested) {
                var set = Set<Int>(minimumCapacity: forward ? 0 : 100)
                set.formUnion(order(value.sorted()))
                nestedMap[key] = set
            }
            var setOfSets = Set<Set<Int>>(minimumCapacity: forward ? 0 : 100)
            setOfSets.formUnion(order(sets))
            var pointSet = Set<Point>(minimumCapacity: forward ? 0 : 100)
            pointSet.formUnion(order(points))
            return Bag(
                id: id, tags: tagSet, counts: countMap, byNumber: numberMap, byUUID: uuidMap, nested: nestedMap,
                sets: setOfSets, points: pointSet, maybe: counts.isEmpty ? nil : ["a": true, "b": false, "c": true])
        }
        return (build(true), build(false))
    }

    @Test func equalValuesEncodeToEqualBytesAndReadBack() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("UnorderedCollectionTests seed \(seed)")
        var random = SeededGenerator(seed: seed)
        for id in 0..<200 {
            let (one, other) = Self.bags(id: id, using: &random)
            #expect(one == other)
            let bytes = try RecordCoder.encode(one)
            #expect(bytes == (try RecordCoder.encode(other)), "seed \(seed), bag \(id)")
            #expect(try bytes.withUnsafeBytes { try RecordCoder.decode(Bag.self, from: $0) } == one)
        }
    }

    @Test func aSaveOfAnEqualModelRecordsNothing() throws {
        var random = SeededGenerator(label: "unordered saves")
        let container = try ModelContainer(
            for: Bag.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("bags")))
        let context = ModelContext(container)
        var pairs: [(Bag, Bag)] = []
        for id in 0..<20 {
            let pair = Self.bags(id: id, using: &random)
            pairs.append(pair)
            context.insert(pair.0)
        }
        let first = try #require(try context.save())
        // The models as read back, and equal ones built anew: nothing to record.
        for bag in try ModelContext(container).fetch(FetchDescriptor<Bag>()) { context.insert(bag) }
        #expect(try context.save() == nil)
        for (_, other) in pairs { context.insert(other) }
        #expect(try context.save() == nil)
        #expect(try container.lastSequence() == first)
        // A real change is still one.
        var changed = pairs[3].1
        changed.tags.insert("new")
        context.insert(changed)
        #expect(try context.save() == first + 1)
        #expect(try ModelContext(container).model(Bag.self, id: 3) == changed)
    }
}
