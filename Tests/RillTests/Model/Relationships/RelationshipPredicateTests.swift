import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Predicates that look through relationships, against Swift's own evaluation of the same
/// predicate on models whose relationships are all read, and against a brute force over the data.
@Suite struct RelationshipPredicateTests {
    let directory = TemporaryDirectory()

    private static let words = ["flour", "sugar", "salt", "butter", "egg", "milk", "yeast"]

    @Test func predicatesThroughRelationshipsMatchSwiftsEvaluation() throws {
        var random = SeededGenerator(label: "relationship predicates")
        let seed = random.seed
        let container = try ModelContainer(
            for: recipeModelTypes, configurations: [ModelConfiguration(url: directory.url.appendingPathComponent("s"))])
        let context = container.mainContext
        let tags = (0..<4).map { Tag(id: "tag\($0)") }
        tags.forEach(context.insert)
        var recipes: [Recipe] = []
        for index in 0..<40 {
            let picked = tags.filter { _ in Bool.random(using: &random) }.map { Reference($0) }
            recipes.append(
                Recipe(name: "recipe \(index % 13)", minutes: Int.random(in: 0...60, using: &random), tags: picked))
        }
        recipes.forEach(context.insert)
        var ingredients: [Ingredient] = []
        for _ in 0..<150 {
            let word = Self.words.randomElement(using: &random)!
            let owner = Int.random(in: -5..<recipes.count, using: &random)
            ingredients.append(
                Ingredient(
                    name: "\(word) \(Int.random(in: 0..<3, using: &random))",
                    grams: Int.random(in: 0...500, using: &random),
                    recipe: owner < 0 ? nil : Reference(recipes[owner])))
        }
        ingredients.forEach(context.insert)
        try context.save()

        var everything = FetchDescriptor<Recipe>()
        everything.relationshipKeyPathsForPrefetching = [\.ingredients, \.tags, \.chef]
        let loadedRecipes = try context.fetch(everything)
        var allIngredients = FetchDescriptor<Ingredient>()
        allIngredients.relationshipKeyPathsForPrefetching = [\.recipe]
        let loadedIngredients = try context.fetch(allIngredients)
        #expect(loadedRecipes.count == recipes.count && loadedIngredients.count == ingredients.count)
        let ingredientsOf = Dictionary(grouping: ingredients.filter { $0.recipe != nil }) { $0.recipe!.id }
        let recipeByID = Dictionary(uniqueKeysWithValues: recipes.map { ($0.id, $0) })

        func check(_ predicate: Predicate<Recipe>, expected: (Recipe) -> Bool, _ label: String) throws {
            let fetched = Set(try context.fetch(FetchDescriptor(predicate: predicate)).map(\.id))
            let swift = Set(try loadedRecipes.filter { try predicate.evaluate($0) }.map(\.id))
            let brute = Set(recipes.filter(expected).map(\.id))
            #expect(fetched == swift, "\(label), seed \(seed)")
            #expect(fetched == brute, "\(label), seed \(seed)")
            #expect(try context.fetchCount(FetchDescriptor(predicate: predicate)) == brute.count, "\(label)")
        }
        func check(_ predicate: Predicate<Ingredient>, expected: (Ingredient) -> Bool, _ label: String) throws {
            let fetched = Set(try context.fetch(FetchDescriptor(predicate: predicate)).map(\.id))
            let swift = Set(try loadedIngredients.filter { try predicate.evaluate($0) }.map(\.id))
            let brute = Set(ingredients.filter(expected).map(\.id))
            #expect(fetched == swift, "\(label), seed \(seed)")
            #expect(fetched == brute, "\(label), seed \(seed)")
        }

        for _ in 0..<12 {
            let word = Self.words.randomElement(using: &random)!
            let grams = Int.random(in: 0...500, using: &random)
            let minutes = Int.random(in: 0...60, using: &random)
            try check(
                #Predicate<Recipe> { recipe in recipe.ingredients.contains { $0.name.contains(word) } },
                expected: { recipe in ingredientsOf[recipe.id, default: []].contains { $0.name.contains(word) } },
                "ingredients mention \(word)")
            try check(
                #Predicate<Recipe> { recipe in
                    recipe.minutes > minutes && recipe.ingredients.contains { $0.grams > grams }
                },
                expected: { recipe in
                    recipe.minutes > minutes && ingredientsOf[recipe.id, default: []].contains { $0.grams > grams }
                }, "minutes > \(minutes) and some grams > \(grams)")
            try check(
                #Predicate<Recipe> { recipe in
                    recipe.ingredients.allSatisfy { $0.grams < grams } || recipe.name.contains(word)
                },
                expected: { recipe in
                    ingredientsOf[recipe.id, default: []].allSatisfy { $0.grams < grams } || recipe.name.contains(word)
                }, "all grams < \(grams) or name mentions \(word)")
            let count = Int.random(in: 0...6, using: &random)
            try check(
                #Predicate<Recipe> { $0.ingredients.count >= count },
                expected: { ingredientsOf[$0.id, default: []].count >= count }, "at least \(count) ingredients")
            let name = "recipe \(Int.random(in: 0..<13, using: &random))"
            try check(
                #Predicate<Ingredient> { $0.recipe?.model?.name == name },
                expected: { $0.recipe.flatMap { recipeByID[$0.id] }?.name == name }, "recipe named \(name)")
            let owner = recipes.randomElement(using: &random)!.id
            try check(
                #Predicate<Ingredient> { $0.recipe?.id == owner && $0.grams >= grams },
                expected: { $0.recipe?.id == owner && $0.grams >= grams }, "recipe id and grams")
            try check(
                #Predicate<Ingredient> { ingredient in
                    ingredient.recipe?.model?.minutes ?? -1 > minutes || ingredient.name.contains(word)
                },
                expected: { ingredient in
                    (ingredient.recipe.flatMap { recipeByID[$0.id] }?.minutes ?? -1) > minutes
                        || ingredient.name.contains(word)
                }, "recipe minutes or name")
        }
        // A reference's identifier is in the record itself: that part is translated, and exactly.
        let owner = recipes[0].id
        let plan = try context.explain(FetchDescriptor<Ingredient>(predicate: #Predicate { $0.recipe?.id == owner }))
        #expect(!plan.contains("residual"), "\(plan)")
        #expect(plan.contains("index Ingredient(recipe)"), "\(plan)")
    }
}
