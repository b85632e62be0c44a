import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// `fetch(_:batchSize:)` against `fetch(_:)`: the same models in the same order, read in order
/// and at random, for every batch size, with unsaved changes merged in; and the collection stays
/// what the store held when it was fetched, whatever is saved later.
@Suite struct FetchBatchTests {
    let directory = TemporaryDirectory()

    struct Item: PersistentModel, Equatable {
        var id: Int
        var group: Int
        var name: String
        static let indexes: [ModelIndex<Item>] = [ModelIndex(\.group)]
    }

    static func random(id: Int, using random: inout SeededGenerator) -> Item {
        Item(id: id, group: Int.random(in: 0..<5, using: &random), name: "n\(Int.random(in: 0..<50, using: &random))")
    }

    @Test func batchesGiveWhatAFetchGives() throws {
        var random = SeededGenerator(label: "fetch batches")
        let container = try ModelContainer(
            for: Item.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = ModelContext(container)
        let empty = try context.fetch(FetchDescriptor<Item>(), batchSize: 10)
        #expect(empty.isEmpty)
        for id in 0..<300 { context.insert(Self.random(id: id, using: &random)) }
        try context.save()

        for round in 0..<60 {
            // Unsaved inserts, replacements and deletes, merged in unless the descriptor says not.
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                let id = Int.random(in: 0..<320, using: &random)
                if Bool.random(using: &random) {
                    context.insert(Self.random(id: id, using: &random))
                } else {
                    context.delete(Self.random(id: id, using: &random))
                }
            }
            let group = Int.random(in: 0..<5, using: &random)
            var descriptor = FetchDescriptor<Item>(
                predicate: Bool.random(using: &random) ? #Predicate { $0.group == group } : nil,
                sortBy: [
                    [], [SortDescriptor(\.name)], [SortDescriptor(\.name, order: .reverse), SortDescriptor(\.id)],
                ].randomElement(using: &random)!)
            if Bool.random(using: &random) { descriptor.fetchLimit = Int.random(in: 0...40, using: &random) }
            if Bool.random(using: &random) { descriptor.fetchOffset = Int.random(in: 0...20, using: &random) }
            descriptor.includePendingChanges = Int.random(in: 0..<4, using: &random) != 0
            let batchSize = [-1, 0, 1, 3, 7, 1_000].randomElement(using: &random)!
            let label = "round \(round), batch size \(batchSize), seed \(random.seed)"

            let expected = try context.fetch(descriptor)
            let batched = try context.fetch(descriptor, batchSize: batchSize)
            #expect(batched.count == expected.count, "\(label)")
            #expect(Array(batched) == expected, "\(label)")
            for index in expected.indices.shuffled(using: &random) {
                #expect(batched[index] == expected[index], "\(label), index \(index)")
            }
            // Saved changes afterwards leave it as it was.
            if Bool.random(using: &random) {
                try context.save()
                let other = ModelContext(container)
                for id in 0..<10 { other.insert(Self.random(id: id, using: &random)) }
                try other.save()
                #expect(Array(batched) == expected, "\(label), after saves")
            }
        }
    }
}
