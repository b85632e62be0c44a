import Foundation
import RillTestSupport
import Testing

@testable import Rill

/// `ModelContext.enumerate(_:batchSize:allowEscapingMutations:block:)`: the models of a fetch in
/// batches, against the fetch itself, with changes made between and during the batches.
@Suite struct EnumerateTests {
    let directory = TemporaryDirectory()

    func container(_ name: String) throws -> ModelContainer {
        try ModelContainer(
            for: Ledger.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent(name)))
    }

    static func ledger(_ id: Int) -> Ledger {
        Ledger(id: id, group: id % 7, amount: Double((id * 37) % 101) / 4, label: "l\(id % 13)", flag: id % 3 == 0)
    }

    @Test func givesWhatFetchGivesWhateverThePlan() throws {
        let container = try container("plans")
        let context = ModelContext(container)
        for id in 0..<1_500 { context.insert(Self.ledger(id)) }
        try context.save()
        let descriptors: [FetchDescriptor<Ledger>] = [
            FetchDescriptor(),
            // An index walk in the sort's order, and one the predicate must be evaluated on.
            FetchDescriptor(predicate: #Predicate { $0.amount > 10 }, sortBy: [SortDescriptor(\.amount)]),
            FetchDescriptor(predicate: #Predicate { $0.amount > 10 && $0.flag }, sortBy: [SortDescriptor(\.amount)]),
            // Sorted in memory.
            FetchDescriptor(
                predicate: #Predicate { $0.group == 3 },
                sortBy: [SortDescriptor(\.label, order: .reverse), SortDescriptor(\.id)]),
            FetchDescriptor(predicate: #Predicate { $0.label.contains("1") }, sortBy: [SortDescriptor(\.id)]),
        ]
        for (index, base) in descriptors.enumerated() {
            for (offset, limit) in [(nil, nil), (5, nil), (nil, 17), (100, 250), (2_000, 3)] as [(Int?, Int?)] {
                var descriptor = base
                descriptor.fetchOffset = offset
                descriptor.fetchLimit = limit
                let expected = try context.fetch(descriptor)
                #expect(try context.fetchIdentifiers(descriptor) == expected.map(\.id), "descriptor \(index)")
                for batchSize in [1, 7, 5_000, 0, -3, .max] {
                    var seen: [Ledger] = []
                    try context.enumerate(descriptor, batchSize: batchSize) { seen.append($0) }
                    #expect(seen == expected, "descriptor \(index), offset \(offset ?? 0), batch \(batchSize)")
                }
            }
        }
    }

    @Test func eachBatchReadsTheStoreAsItIsThen() throws {
        let container = try container("between")
        let context = ModelContext(container)
        for id in 0..<30 { context.insert(Self.ledger(id)) }
        try context.save()
        let other = ModelContext(container)
        var seen: [Ledger] = []
        try context.enumerate(FetchDescriptor<Ledger>(sortBy: [SortDescriptor(\.id)]), batchSize: 10) { model in
            seen.append(model)
            if model.id == 0 {
                // Saved by another context while the first batch is being handed out: the later
                // batches see it.
                other.delete(Self.ledger(15))
                var renamed = Self.ledger(25)
                renamed.label = "renamed"
                other.insert(renamed)
                other.insert(Self.ledger(100))
                try other.save()
            }
        }
        #expect(seen.map(\.id) == Array(0..<15) + Array(16..<30))
        #expect(seen.last { $0.id == 25 }?.label == "renamed")
    }

    @Test func changesTheBlockStagesAreSeenByLaterBatchesAndKept() throws {
        let container = try container("staged")
        let context = ModelContext(container)
        for id in 0..<20 { context.insert(Self.ledger(id)) }
        try context.save()
        var seen: [Int] = []
        var flagged: [Bool] = []
        try context.enumerate(FetchDescriptor<Ledger>(sortBy: [SortDescriptor(\.id)]), batchSize: 4) { model in
            seen.append(model.id)
            flagged.append(model.flag)
            if model.id == 2 {
                context.delete(Self.ledger(9))
                var changed = Self.ledger(12)
                changed.flag.toggle()
                context.insert(changed)
            }
        }
        #expect(seen == Array(0..<9) + Array(10..<20))
        #expect(flagged[seen.firstIndex(of: 12)!] == !Self.ledger(12).flag)
        #expect(context.hasChanges)

        // Without pending changes, every batch reads the saved store.
        var savedOnly = FetchDescriptor<Ledger>(sortBy: [SortDescriptor(\.id)])
        savedOnly.includePendingChanges = false
        seen = []
        try context.enumerate(savedOnly, batchSize: 4, allowEscapingMutations: true) { seen.append($0.id) }
        #expect(seen == Array(0..<20))
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Ledger>()) == 19)
    }

    @Test func anErrorOfTheBlockEndsTheEnumeration() throws {
        struct Stop: Error {}
        let container = try container("stop")
        let context = ModelContext(container)
        for id in 0..<50 { context.insert(Self.ledger(id)) }
        try context.save()
        var calls = 0
        #expect(throws: Stop.self) {
            try context.enumerate(FetchDescriptor<Ledger>(), batchSize: 8) { model in
                calls += 1
                if model.id == 11 { throw Stop() }
            }
        }
        #expect(calls == 12)
    }

    @Test func prefetchedRelationshipsAreReadAsFetchReadsThem() throws {
        let container = try ModelContainer(
            for: Recipe.self, Ingredient.self, Note.self, Tag.self, Chef.self, Review.self,
            configurations: ModelConfiguration(url: directory.url.appendingPathComponent("recipes")))
        let context = ModelContext(container)
        let chef = Chef(id: 1, name: "Lin")
        context.insert(chef)
        for index in 0..<9 {
            let recipe = Recipe(name: "r\(index)", minutes: index, chef: index % 2 == 0 ? Reference(chef) : nil)
            context.insert(recipe)
            for part in 0..<(index % 3) {
                context.insert(Ingredient(name: "i\(index).\(part)", recipe: Reference(recipe)))
            }
        }
        try context.save()
        var descriptor = FetchDescriptor<Recipe>(sortBy: [SortDescriptor(\.minutes)])
        descriptor.relationshipKeyPathsForPrefetching = [\.ingredients, \.chef]
        let fetched = try context.fetch(descriptor)
        var seen: [Recipe] = []
        try context.enumerate(descriptor, batchSize: 4) { seen.append($0) }
        #expect(seen == fetched)
        #expect(seen.map { Set($0.ingredients.map(\.name)) } == fetched.map { Set($0.ingredients.map(\.name)) })
        #expect(seen.allSatisfy { $0.ingredients.isLoaded })
        #expect(seen.filter { $0.chef?.model?.name == "Lin" }.count == 5)
    }

    @Test func kindsOfAFamilyAndUnknownTypes() throws {
        let container = try ModelContainer(
            for: Cake.self, Drink.self, Soup.self,
            configurations: ModelConfiguration(url: directory.url.appendingPathComponent("family")))
        let context = ModelContext(container)
        for id in 0..<12 {
            if id % 2 == 0 {
                context.insert(Cake(id: id, name: "cake \(id)", rating: id % 5, minutes: id, tags: []))
            } else {
                context.insert(Drink(id: id, name: "drink \(id)", rating: id % 5, caffeinated: id % 3 == 0))
            }
        }
        try context.save()
        var cakes: [Cake] = []
        try context.enumerate(FetchDescriptor<Cake>(sortBy: [SortDescriptor(\.rating)]), batchSize: 2) {
            cakes.append($0)
        }
        #expect(cakes == (try context.fetch(FetchDescriptor<Cake>(sortBy: [SortDescriptor(\.rating)]))))
        #expect(cakes.count == 6)

        let ledgers = ModelContext(try self.container("other"))
        #expect(throws: RillError.self) { try ledgers.enumerate(FetchDescriptor<Cake>()) { _ in } }
    }
}
