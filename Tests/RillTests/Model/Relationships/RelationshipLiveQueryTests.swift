import Dispatch
import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Live queries whose predicates look through relationships, over random saves of both sides:
/// after each save, every query was told of one change exactly when its results changed, and the
/// previous results with the change applied equal a fresh fetch (itself held to Swift's own
/// evaluation in `RelationshipPredicateTests`) and the query's own results.
@Suite struct RelationshipLiveQueryTests {
    let directory = TemporaryDirectory()

    private static let words = ["flour", "sugar", "salt", "butter", "egg"]

    final class Received<T: Sendable>: @unchecked Sendable {
        // Guarded by the collecting queue.
        var changes: [ResultsChange<T>] = []
    }

    private struct Followed<T: PersistentModel & Equatable> {
        var query: LiveQuery<T>
        var observation: LiveObservation
        var received: Received<T>
        var descriptor: FetchDescriptor<T>
        var previous: [T]
        var text: String
    }

    @Test func liveQueriesFollowChangesOfRelatedModels() throws {
        var random = SeededGenerator(label: "relationship live queries")
        let container = try ModelContainer(
            for: recipeModelTypes, configurations: [ModelConfiguration(url: directory.url.appendingPathComponent("s"))])
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

        let collector = DispatchQueue(label: "relationship live collector")
        var recipeQueries: [Followed<Recipe>] = []
        var ingredientQueries: [Followed<Ingredient>] = []
        for word in Self.words {
            let grams = Int.random(in: 0...500, using: &random)
            var descriptors: [(FetchDescriptor<Recipe>, String)] = [
                (FetchDescriptor(predicate: #Predicate { $0.ingredients.contains { $0.name.contains(word) } }), word),
                (
                    FetchDescriptor(
                        predicate: #Predicate { recipe in
                            recipe.ingredients.contains { $0.grams > grams } || recipe.name.contains(word)
                        }, sortBy: [SortDescriptor(\.minutes), SortDescriptor(\.name)]), "grams > \(grams) or name"
                ),
            ]
            var limited = FetchDescriptor<Recipe>(
                predicate: #Predicate { $0.ingredients.contains { $0.name.starts(with: word) } },
                sortBy: [SortDescriptor(\.minutes, order: .reverse)])
            limited.fetchLimit = 3
            descriptors.append((limited, "top 3 with \(word)"))
            for (descriptor, text) in descriptors {
                let query = try LiveQuery(descriptor, in: container)
                let received = Received<Recipe>()
                let observation = query.observe(on: collector) { received.changes.append($0) }
                let initial = try context.fetch(descriptor)
                #expect(Array(query) == initial, "initial \(text)")
                recipeQueries.append(
                    Followed(
                        query: query, observation: observation, received: received, descriptor: descriptor,
                        previous: initial, text: text))
            }
        }
        for index in 0..<8 {
            let name = "recipe \(index)"
            let minutes = Int.random(in: 0...60, using: &random)
            for (descriptor, text) in [
                (FetchDescriptor<Ingredient>(predicate: #Predicate { $0.recipe?.model?.name == name }), name),
                (
                    FetchDescriptor<Ingredient>(
                        predicate: #Predicate { $0.recipe?.model?.minutes ?? -1 > minutes },
                        sortBy: [SortDescriptor(\.grams)]), "minutes > \(minutes)"
                ),
            ] {
                let query = try LiveQuery(descriptor, in: container)
                let received = Received<Ingredient>()
                let observation = query.observe(on: collector) { received.changes.append($0) }
                let initial = try context.fetch(descriptor)
                #expect(Array(query) == initial, "initial \(text)")
                ingredientQueries.append(
                    Followed(
                        query: query, observation: observation, received: received, descriptor: descriptor,
                        previous: initial, text: text))
            }
        }

        func check<T: PersistentModel & Equatable>(
            _ followed: inout [Followed<T>], round: Int, sequence: UInt64?
        ) throws
            -> Int
        {
            var changedQueries = 0
            for index in followed.indices {
                let item = followed[index]
                let expected = try context.fetch(item.descriptor)
                let changes = item.received.changes
                item.received.changes = []
                let changed = expected != item.previous
                if changed { changedQueries += 1 }
                let label = "round \(round), \(T.entityName) query \(item.text), seed \(random.seed)"
                #expect(changes.count == (changed ? 1 : 0), "\(label): \(changes.count) changes, changed: \(changed)")
                var applied = item.previous
                for change in changes { applied = change.apply(to: applied) }
                #expect(applied == expected, "\(label): previous + change != fresh fetch")
                #expect(Array(item.query) == expected, "\(label): results != fresh fetch")
                if changed, let sequence { #expect(changes.last?.sequence == sequence, "\(label): sequence") }
                followed[index].previous = expected
            }
            return changedQueries
        }

        var relatedOnly = 0
        for round in 0..<150 {
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
                    // Move an ingredient to another recipe, or out of any.
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
            let sequence = try context.save()
            if let first = recipeQueries.first { try first.query.catchUp() }
            collector.sync {}
            let changed = try check(&recipeQueries, round: round, sequence: sequence)
            _ = try check(&ingredientQueries, round: round, sequence: sequence)
            if !touchedRecipes { relatedOnly += changed }
        }
        // The case a fetched-results controller misses happened, and was followed.
        #expect(relatedOnly > 0, "no recipe query changed through its ingredients alone")
        _ = recipeQueries.map(\.observation)
        _ = ingredientQueries.map(\.observation)
    }

    /// Commits that pile up while the follower is held are read in one batch, whose snapshot is
    /// the last of them: each commit's related records are still read as of that commit, so each
    /// query is told of exactly the changes of each commit.
    @Test func aLaggingFollowerReadsRelatedRecordsAsOfEachCommit() throws {
        var random = SeededGenerator(label: "relationship lagging follower")
        let container = try ModelContainer(
            for: recipeModelTypes, configurations: [ModelConfiguration(url: directory.url.appendingPathComponent("l"))])
        let context = ModelContext(container)
        var recipes: [Recipe] = []
        var ingredients: [UUID: Ingredient] = [:]
        for index in 0..<10 {
            let recipe = Recipe(name: "recipe \(index)", minutes: index * 5)
            recipes.append(recipe)
            context.insert(recipe)
        }
        for _ in 0..<30 {
            let ingredient = Ingredient(
                name: Self.words.randomElement(using: &random)!,
                recipe: Reference(recipes.randomElement(using: &random)!))
            ingredients[ingredient.id] = ingredient
            context.insert(ingredient)
        }
        try context.save()
        let collector = DispatchQueue(label: "relationship lagging collector")
        var followed: [(LiveQuery<Recipe>, LiveObservation, Received<Recipe>, FetchDescriptor<Recipe>)] = []
        for word in Self.words {
            var descriptor = FetchDescriptor<Recipe>(
                predicate: #Predicate { $0.ingredients.contains { $0.name == word } },
                sortBy: [SortDescriptor(\.minutes)])
            if word.count % 2 == 0 { descriptor.fetchLimit = 2 }
            let query = try LiveQuery(descriptor, in: container)
            let received = Received<Recipe>()
            let observation = query.observe(on: collector) { received.changes.append($0) }
            followed.append((query, observation, received, descriptor))
        }
        var ingredientQueries:
            [(LiveQuery<Ingredient>, LiveObservation, Received<Ingredient>, FetchDescriptor<Ingredient>)] =
                []
        for minutes in [10, 25] {
            let descriptor = FetchDescriptor<Ingredient>(
                predicate: #Predicate { $0.recipe?.model?.minutes ?? -1 > minutes })
            let query = try LiveQuery(descriptor, in: container)
            let received = Received<Ingredient>()
            let observation = query.observe(on: collector) { received.changes.append($0) }
            ingredientQueries.append((query, observation, received, descriptor))
        }
        let follower = try LogFollowers.retain(for: container.store)
        defer { LogFollowers.release(follower) }

        for round in 0..<30 {
            let release = follower.holdForTesting()
            var sequences: [UInt64] = []
            var expected: [[[Recipe]]] = []
            var expectedIngredients: [[[Ingredient]]] = []
            for _ in 0..<Int.random(in: 2...5, using: &random) {
                switch Int.random(in: 0..<4, using: &random) {
                case 0, 1:
                    guard var ingredient = ingredients.values.randomElement(using: &random) else { continue }
                    ingredient.name = Self.words.randomElement(using: &random)!
                    if Bool.random(using: &random) {
                        ingredient.recipe = Reference(recipes.randomElement(using: &random)!)
                    }
                    ingredients[ingredient.id] = ingredient
                    context.insert(ingredient)
                case 2:
                    var recipe = recipes.randomElement(using: &random)!
                    recipe.minutes = Int.random(in: 0...50, using: &random)
                    recipes = recipes.map { $0.id == recipe.id ? recipe : $0 }
                    context.insert(recipe)
                default:
                    let ingredient = Ingredient(
                        name: Self.words.randomElement(using: &random)!,
                        recipe: Reference(recipes.randomElement(using: &random)!))
                    ingredients[ingredient.id] = ingredient
                    context.insert(ingredient)
                }
                guard let sequence = try context.save() else { continue }
                sequences.append(sequence)
                expected.append(try followed.map { try context.fetch($0.3) })
                expectedIngredients.append(try ingredientQueries.map { try context.fetch($0.3) })
            }
            let previous = followed.map { Array($0.0) }
            let previousIngredients = ingredientQueries.map { Array($0.0) }
            release()
            try followed[0].0.catchUp()
            collector.sync {}
            func verify<T: PersistentModel & Equatable>(
                _ label: String, previous: [T], received: Received<T>, expected: [[T]], final: [T]
            ) {
                var current = previous
                var changes = received.changes[...]
                received.changes = []
                for (step, sequence) in sequences.enumerated() where expected[step] != current {
                    guard let change = changes.popFirst() else {
                        Issue.record("\(label): no change for commit \(sequence), seed \(random.seed)")
                        return
                    }
                    #expect(change.sequence == sequence, "\(label)")
                    current = change.apply(to: current)
                    #expect(current == expected[step], "\(label), commit \(sequence), seed \(random.seed)")
                    current = expected[step]
                }
                #expect(changes.isEmpty, "\(label): \(changes.count) changes left, seed \(random.seed)")
                #expect(final == current, "\(label): results")
            }
            for (index, item) in followed.enumerated() {
                verify(
                    "round \(round), recipe query \(index)", previous: previous[index], received: item.2,
                    expected: expected.map { $0[index] }, final: Array(item.0))
            }
            for (index, item) in ingredientQueries.enumerated() {
                verify(
                    "round \(round), ingredient query \(index)", previous: previousIngredients[index], received: item.2,
                    expected: expectedIngredients.map { $0[index] }, final: Array(item.0))
            }
        }
        _ = followed.map(\.1)
        _ = ingredientQueries.map(\.1)
    }
}
