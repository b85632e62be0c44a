import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Live text queries (`RecordLiveQuery`, what `rill watch` and `rill serve` follow) whose
/// predicates look through relationships, over random saves of both sides: after each save, every
/// query's previous results with the changes it was told of applied equal a fresh text query
/// (itself held to the typed fetch and a brute force in `RelationshipTextQueryTests`), and a query
/// was told of a change exactly when its results changed.
@Suite struct RelationshipTextLiveQueryTests {
    let directory = TemporaryDirectory()

    private static let words = ["flour", "sugar", "salt", "butter", "egg"]

    typealias Events = RecordLiveQueryTests.Events
    typealias Row = RecordLiveQueryTests.Row

    @Test func textLiveQueriesFollowChangesOfRelatedRecords() throws {
        var random = SeededGenerator(label: "relationship text live queries")
        let seed = random.seed
        let container = try ModelContainer(
            for: recipeModelTypes, configurations: [ModelConfiguration(url: directory.url.appendingPathComponent("s"))])
        let store = container.store
        let context = ModelContext(container)
        var recipes: [UUID: Recipe] = [:]
        var ingredients: [UUID: Ingredient] = [:]
        func newRecipe() -> Recipe {
            Recipe(
                name: "recipe \(Int.random(in: 0..<8, using: &random))", minutes: Int.random(in: 0...60, using: &random)
            )
        }
        func newIngredient() -> Ingredient {
            let owner = recipes.values.randomElement(using: &random)
            return Ingredient(
                name: "\(Self.words.randomElement(using: &random)!) \(Int.random(in: 0..<3, using: &random))",
                grams: Int.random(in: 0...500, using: &random), recipe: owner.map { Reference($0) })
        }
        for _ in 0..<20 {
            let recipe = newRecipe()
            recipes[recipe.id] = recipe
            context.insert(recipe)
        }
        for _ in 0..<60 {
            let ingredient = newIngredient()
            ingredients[ingredient.id] = ingredient
            context.insert(ingredient)
        }
        try context.save()

        var texts: [String] = []
        for word in Self.words {
            let grams = Int.random(in: 0...500, using: &random)
            texts += [
                "Recipe where any ingredients.name contains \"\(word)\"",
                "Recipe where any ingredients.grams > \(grams) or name contains \"\(word)\" sort by minutes, name",
                "Recipe where any ingredients.name beginswith \"\(word)\" sort by minutes desc limit 3",
                "Recipe where count(ingredients) >= \(Int.random(in: 1...4, using: &random)) sort by name",
                "Recipe where minutes > \(Int.random(in: 0...60, using: &random)) and any ingredients.name contains "
                    + "\"\(word)\" sort by minutes limit 4",
            ]
        }
        for index in 0..<6 {
            texts += [
                "Ingredient where recipe.name == \"recipe \(index)\"",
                "Ingredient where recipe.minutes > \(Int.random(in: 0...60, using: &random)) sort by grams limit 5",
            ]
        }
        var queries: [(live: RecordLiveQuery, events: Events, query: Query, previous: [Row], sequence: UInt64)] = []
        for text in texts {
            let query = try QueryParser.parse(text)
            let events = Events()
            let live = try RecordLiveQuery(query, store: store) { events.append($0) }
            let received = events.take()
            guard received.count == 1, case .initial(let rows, let sequence) = received[0] else {
                Issue.record("\(text): expected one initial event, got \(received)")
                continue
            }
            let expected = try store.run(query).map(Row.init)
            #expect(rows.map(Row.init) == expected, "initial results of \(text)")
            queries.append((live, events, query, expected, sequence))
        }

        var relatedOnly = 0
        for round in 0..<120 {
            var touchedRecipes = false
            for _ in 0..<(Int.random(in: 0..<4, using: &random) == 0 ? 3 : 1) {
                switch Int.random(in: 0..<10, using: &random) {
                case 0, 1, 2:
                    // Rename an ingredient: its recipe may enter or leave a search.
                    guard var ingredient = ingredients.values.randomElement(using: &random) else { continue }
                    ingredient.name = "\(Self.words.randomElement(using: &random)!) \(round)"
                    ingredients[ingredient.id] = ingredient
                    context.insert(ingredient)
                case 3, 4:
                    guard var ingredient = ingredients.values.randomElement(using: &random) else { continue }
                    ingredient.recipe =
                        Int.random(in: 0..<4, using: &random) == 0
                        ? nil : recipes.values.randomElement(using: &random).map { Reference($0) }
                    ingredients[ingredient.id] = ingredient
                    context.insert(ingredient)
                case 5:
                    guard let ingredient = ingredients.values.randomElement(using: &random) else { continue }
                    ingredients[ingredient.id] = nil
                    context.delete(ingredient)
                case 6:
                    let ingredient = newIngredient()
                    ingredients[ingredient.id] = ingredient
                    context.insert(ingredient)
                case 7:
                    guard var recipe = recipes.values.randomElement(using: &random) else { continue }
                    recipe.name = "recipe \(Int.random(in: 0..<8, using: &random))"
                    recipe.minutes = Int.random(in: 0...60, using: &random)
                    recipes[recipe.id] = recipe
                    context.insert(recipe)
                    touchedRecipes = true
                case 8:
                    // Delete a recipe: its ingredients go with it, in the same commit.
                    guard recipes.count > 5, let recipe = recipes.values.randomElement(using: &random) else { continue }
                    recipes[recipe.id] = nil
                    for (id, ingredient) in ingredients where ingredient.recipe?.id == recipe.id {
                        ingredients[id] = nil
                    }
                    context.delete(recipe)
                    touchedRecipes = true
                default:
                    let recipe = newRecipe()
                    recipes[recipe.id] = recipe
                    context.insert(recipe)
                    touchedRecipes = true
                }
            }
            try context.save()
            try queries[0].live.catchUp()
            let head = try store.head()
            for index in queries.indices {
                let item = queries[index]
                let label = "round \(round), \(item.query), seed \(seed)"
                var sequence = item.sequence
                let expected = try store.run(item.query).map(Row.init)
                let events = item.events.take()
                let changed = expected != item.previous
                let changes = events.filter { if case .change = $0 { true } else { false } }
                #expect(changes.count == (changed ? 1 : 0), "\(label): \(changes.count) changes, changed: \(changed)")
                if changed, item.query.entity == "Recipe", !touchedRecipes { relatedOnly += 1 }
                let applied = RecordLiveQueryTests.apply(
                    events, to: item.previous, after: &sequence, label: label,
                    resultsAt: { $0 == head ? expected : nil })
                #expect(applied == expected, "\(label): previous + changes != a fresh text query")
                #expect(item.live.results.rows.map(Row.init) == expected, "\(label): results != a fresh text query")
                queries[index].previous = expected
                queries[index].sequence = sequence
            }
        }
        // A recipe query changed through its ingredients alone, and was told.
        #expect(relatedOnly > 0, "no recipe query changed through its ingredients alone, seed \(seed)")
    }

    @Test func renamingAnIngredientMovesItsRecipeInAndOutOfASearch() throws {
        let container = try ModelContainer(
            for: recipeModelTypes, configurations: [ModelConfiguration(url: directory.url.appendingPathComponent("s"))])
        let store = container.store
        let context = ModelContext(container)
        let bread = Recipe(name: "bread")
        var flour = Ingredient(name: "flour", recipe: Reference(bread))
        context.insert(bread)
        context.insert(flour)
        try context.save()
        let events = Events()
        let live = try RecordLiveQuery(
            QueryParser.parse("Recipe where any ingredients.name contains[c] \"FLOUR\""), store: store
        ) { events.append($0) }
        #expect(live.results.rows.map(\.key) == [bread.id.storageKey])
        _ = events.take()

        flour.name = "rye"
        context.insert(flour)
        try context.save()
        try live.catchUp()
        #expect(live.results.rows.isEmpty)
        guard case .change(let removal)? = events.take().first else {
            Issue.record("no change told")
            return
        }
        #expect(removal.removals.count == 1 && removal.insertions.isEmpty)

        flour.name = "wholemeal flour"
        context.insert(flour)
        try context.save()
        try live.catchUp()
        #expect(live.results.rows.map(\.key) == [bread.id.storageKey])
        // A query through relationships does not resume after a commit (related commits are
        // followed live only).
        #expect(throws: RillError.self) {
            _ = try RecordLiveQuery(live.query, store: store, since: 1) { _ in }
        }
        // Nor is it replayed or read as of an earlier commit; as of the last one, it reads.
        #expect(throws: RillError.self) { _ = try RecordReplay(live.query, store: store, from: 1) }
        #expect(throws: RillError.self) { _ = try store.run(live.query, asOf: .sequence(1)) }
        let head = try store.head()
        #expect(try store.run(live.query, asOf: .sequence(head)).rows.map(\.key) == [bread.id.storageKey])
        #expect(try store.readsRelatedRecords(live.query))
        #expect(try !store.readsRelatedRecords(QueryParser.parse("Ingredient where recipe != nil")))
    }
}
