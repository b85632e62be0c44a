import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// A sort on a value whose `<` is its own (an enum whose order is not its raw values', a struct
/// stored as one value) follows that `<`, as Foundation's `sorted(using:)` does: with and without
/// an index on the field, with a limit, and in a live query.
@Suite struct ComparableSortTests {
    let directory = TemporaryDirectory()

    /// Declared smallest first; its raw values sort the other way round.
    enum Size: String, Codable, Sendable, CaseIterable, Comparable {
        case small = "z-small", medium = "m-medium", large = "a-large"
        static func < (lhs: Size, rhs: Size) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }
    }

    /// Higher raw value, lower order.
    enum Urgency: Int, Codable, Sendable, CaseIterable, Comparable {
        case urgent = 1, normal, low
        static func < (lhs: Urgency, rhs: Urgency) -> Bool { lhs.rawValue > rhs.rawValue }
    }

    /// Stored as its text, ordered by its numbers ("10.0.0" after "9.1.0").
    struct Version: Codable, Sendable, Comparable, Hashable {
        var parts: [Int]
        init(_ text: String) { parts = text.split(separator: ".").map { Int($0)! } }
        init(from decoder: any Decoder) throws {
            self.init(try decoder.singleValueContainer().decode(String.self))
        }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(parts.map(String.init).joined(separator: "."))
        }
        static func < (lhs: Version, rhs: Version) -> Bool { lhs.parts.lexicographicallyPrecedes(rhs.parts) }
    }

    struct Shirt: PersistentModel, Equatable {
        var id: Int
        var size: Size
        var urgency: Urgency?
        var version: Version
    }

    struct IndexedShirt: PersistentModel, Equatable {
        var id: Int
        var size: Size
        var urgency: Urgency?
        var version: Version
        static let indexes: [ModelIndex<IndexedShirt>] = [
            ModelIndex(\.size), ModelIndex(\.urgency), ModelIndex(\.version),
        ]
    }

    @Test func sortsFollowTheTypesOwnOrder() throws {
        var random = SeededGenerator(label: "comparable sorts")
        let container = try ModelContainer(
            for: Shirt.self, IndexedShirt.self,
            configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = container.mainContext
        let versions = ["1.9.3", "1.10.0", "2.0.0", "10.0.0", "9.1.0", "0.0.1"]
        var shirts: [Shirt] = []
        for id in 0..<120 {
            let shirt = Shirt(
                id: id, size: Size.allCases.randomElement(using: &random)!,
                urgency: Bool.random(using: &random) ? nil : Urgency.allCases.randomElement(using: &random)!,
                version: Version(versions.randomElement(using: &random)!))
            shirts.append(shirt)
            context.insert(shirt)
            context.insert(IndexedShirt(id: id, size: shirt.size, urgency: shirt.urgency, version: shirt.version))
        }
        try context.save()

        func check(_ sortBy: [SortDescriptor<Shirt>], limit: Int? = nil) throws {
            var descriptor = FetchDescriptor<Shirt>(sortBy: sortBy + [SortDescriptor(\.id)])
            descriptor.fetchLimit = limit
            let expected = shirts.sorted(using: sortBy + [SortDescriptor(\.id)]).prefix(limit ?? .max)
            #expect(
                try context.fetch(descriptor).map(\.id) == expected.map(\.id),
                "\(sortBy), limit \(String(describing: limit))")
        }
        func checkIndexed(_ sortBy: [SortDescriptor<IndexedShirt>], limit: Int? = nil) throws {
            var descriptor = FetchDescriptor<IndexedShirt>(sortBy: sortBy + [SortDescriptor(\.id)])
            descriptor.fetchLimit = limit
            let indexed = shirts.map {
                IndexedShirt(id: $0.id, size: $0.size, urgency: $0.urgency, version: $0.version)
            }
            let expected = indexed.sorted(using: sortBy + [SortDescriptor(\.id)]).prefix(limit ?? .max)
            #expect(
                try context.fetch(descriptor).map(\.id) == expected.map(\.id),
                "indexed \(sortBy), limit \(String(describing: limit))")
        }
        for limit in [nil, 1, 7] {
            try check([SortDescriptor(\.size)], limit: limit)
            try check([SortDescriptor(\.size, order: .reverse)], limit: limit)
            try check([SortDescriptor(\.urgency)], limit: limit)
            try check([SortDescriptor(\.version, order: .reverse)], limit: limit)
            try checkIndexed([SortDescriptor(\.size)], limit: limit)
            try checkIndexed([SortDescriptor(\.urgency, order: .reverse)], limit: limit)
            try checkIndexed([SortDescriptor(\.version)], limit: limit)
        }

        // A live query keeps the same order through a change.
        var descriptor = FetchDescriptor<Shirt>(sortBy: [SortDescriptor(\.size), SortDescriptor(\.id)])
        descriptor.fetchLimit = 10
        let live = try LiveQuery(descriptor, in: container)
        context.insert(Shirt(id: 500, size: .small, urgency: nil, version: Version("3.0.0")))
        try context.save()
        try live.catchUp()
        #expect(Array(live).map(\.id) == (try context.fetch(descriptor)).map(\.id))
        #expect(Array(live).first?.size == .small)
    }
}

extension ComparableSortTests.Size: IndexableValue {}
extension ComparableSortTests.Urgency: IndexableValue {}
extension ComparableSortTests.Version: IndexableValue {}
