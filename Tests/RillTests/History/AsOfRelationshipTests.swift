import Foundation
import RillTestSupport
import Testing

@testable import Rill

/// A fetch as of a commit reads the models its results relate to as of that commit too: through
/// a predicate that looks through a relationship, a prefetched reference, and an inverse.
@Suite struct AsOfRelationshipTests {
    let directory = TemporaryDirectory()

    @Test func relatedModelsAreReadAsOfTheCommit() throws {
        let container = try ModelContainer(
            for: recipeModelTypes, configurations: [ModelConfiguration(url: directory.url.appendingPathComponent("s"))])
        let context = container.mainContext
        let pie = Recipe(name: "pie", chef: Reference(1))
        context.insert(Chef(id: 1, name: "Ada"))
        context.insert(pie)
        let first = try #require(try context.save())
        context.insert(Chef(id: 1, name: "Bea"))
        let second = try #require(try context.save())
        context.insert(Recipe(name: "tart", chef: Reference(1)))
        try context.save()

        let ada = "Ada"
        let byAda = FetchDescriptor<Recipe>(predicate: #Predicate { $0.chef?.model?.name == ada })
        #expect(try context.fetch(byAda, asOf: HistoryToken(sequence: first)).map(\.name) == ["pie"])
        #expect(try context.fetch(byAda, asOf: HistoryToken(sequence: second)).isEmpty)
        #expect(try context.fetch(byAda).isEmpty)

        var withChef = FetchDescriptor<Recipe>(sortBy: [SortDescriptor(\.name)])
        withChef.relationshipKeyPathsForPrefetching = [\Recipe.chef]
        #expect(
            try context.fetch(withChef, asOf: HistoryToken(sequence: first)).map { $0.chef?.model?.name } == ["Ada"])
        #expect(try context.fetch(withChef).map { $0.chef?.model?.name } == ["Bea", "Bea"])

        var withRecipes = FetchDescriptor<Chef>()
        withRecipes.relationshipKeyPathsForPrefetching = [\Chef.recipes]
        #expect(
            try context.fetch(withRecipes, asOf: HistoryToken(sequence: second)).first?.recipes.map(\.name) == ["pie"])
        let tart = "tart"
        let cooksTart = FetchDescriptor<Chef>(predicate: #Predicate { $0.recipes.contains { $0.name == tart } })
        #expect(try context.fetch(cooksTart, asOf: HistoryToken(sequence: second)).isEmpty)
        #expect(try context.fetch(cooksTart).map(\.id) == [1])

        // A live query resumed since the first commit tells its first observer what changed
        // since: the pie left when its chef was renamed.
        let resumed = try LiveQuery(byAda, in: container, since: HistoryToken(sequence: first))
        #expect(Array(resumed).isEmpty)
        let told = DispatchSemaphore(value: 0)
        let removed = Removed()
        let observation = resumed.observe(on: DispatchQueue(label: "as-of relationships")) { change in
            removed.names = change.removals.map(\.element.name)
            told.signal()
        }
        defer { observation.cancel() }
        #expect(told.wait(timeout: .now() + 10) == .success)
        #expect(removed.names == ["pie"])
    }

    private final class Removed: @unchecked Sendable {
        var names: [String] = []
    }
}
