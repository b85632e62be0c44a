// The recipes sample: two kinds of recipe — baked goods and beverages — through a model family,
// with ingredients as a relationship.
//
//   swift run recipes-demo [store-directory]
//
// Filters by kind, searches across names, instructions and ingredients, combines the two, and finds
// the next planned recipe with a fetch limit of 1. A live search of the baked goods follows an
// ingredient's rename (its recipe enters the results though the recipe itself did not change), and
// deleting an ingredient removes it from the recipes that used it, in the same commit. Each run
// starts from an empty store: its own default one, emptied, or a new directory given.
import Dispatch
import Foundation
import Rill

struct Ingredient: PersistentModel {
    var id: String
    var name: String
}

/// The base of the family: what every kind of recipe has.
protocol Recipe: PersistentModel where ID == Int {
    var name: String { get }
    var instructions: String { get }
    var planned: Date? { get }
    var ingredients: [Reference<Ingredient>] { get }
}

extension Recipe {
    static var family: ModelFamily? { .recipes }
}

extension ModelFamily {
    static let recipes = ModelFamily(
        of: (any Recipe).self, entityName: "Recipe", kinds: BakedGood.self, Beverage.self)
}

struct BakedGood: Recipe {
    var id: Int
    var name: String
    var instructions: String
    var planned: Date?
    var ingredients: [Reference<Ingredient>]
    var ovenMinutes: Int

    static let relationships: [ModelRelationship<BakedGood>] = [.references(\.ingredients)]
}

struct Beverage: Recipe {
    var id: Int
    var name: String
    var instructions: String
    var planned: Date?
    var ingredients: [Reference<Ingredient>]
    var isHot: Bool

    static let relationships: [ModelRelationship<Beverage>] = [.references(\.ingredients)]
}

let given = CommandLine.arguments.dropFirst().first
let path = given ?? ".build/rill-demo/recipes"
if given == nil {
    try? FileManager.default.removeItem(atPath: path)
} else if FileManager.default.fileExists(atPath: path) {
    FileHandle.standardError.write(Data("recipes-demo: \(path) exists; give a directory that does not\n".utf8))
    exit(64)
}
let container = try ModelContainer(
    for: Ingredient.self, BakedGood.self, Beverage.self,
    configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
let context = container.mainContext
let start = Date(timeIntervalSince1970: 1_790_000_000)
func day(_ number: Int) -> Date { start.addingTimeInterval(Double(number) * 86_400) }
func uses(_ names: String...) -> [Reference<Ingredient>] { names.map { Reference($0) } }

for name in ["flour", "butter", "sugar", "cocoa", "milk", "tea", "lemon", "ginger", "coffee", "eggs"] {
    context.insert(Ingredient(id: name, name: name))
}
context.insert(
    BakedGood(
        id: 1, name: "Shortbread", instructions: "Rub the butter into the flour, bake slowly", planned: day(6),
        ingredients: uses("flour", "butter", "sugar"), ovenMinutes: 40))
context.insert(
    BakedGood(
        id: 2, name: "Brownies", instructions: "Melt, stir, bake until just set", planned: day(3),
        ingredients: uses("cocoa", "butter", "sugar", "eggs"), ovenMinutes: 25))
context.insert(
    BakedGood(
        id: 3, name: "Lemon drizzle", instructions: "Pour the lemon syrup over the warm cake", planned: nil,
        ingredients: uses("flour", "lemon", "sugar", "eggs"), ovenMinutes: 45))
context.insert(
    Beverage(
        id: 4, name: "Hot chocolate", instructions: "Whisk into warm milk", planned: day(2),
        ingredients: uses("cocoa", "milk", "sugar"), isHot: true))
context.insert(
    Beverage(
        id: 5, name: "Iced tea", instructions: "Brew strong, pour over ice with lemon", planned: day(1),
        ingredients: uses("tea", "lemon"), isHot: false))
context.insert(
    Beverage(
        id: 6, name: "Ginger tea", instructions: "Simmer sliced ginger", planned: nil,
        ingredients: uses("ginger", "tea"), isHot: true))
try context.save()

func names(_ recipes: [any Recipe]) -> String { recipes.map(\.name).joined(separator: ", ") }
let byName = [SortDescriptor<any Recipe>(\.name)]

// Filter by kind: the family's discriminator, `$0 is Beverage`.
let beverages = #Predicate<any Recipe> { $0 is Beverage }
print("Beverages: " + names(try context.fetch(FamilyDescriptor(predicate: beverages, sortBy: byName))))

// Search across names, instructions and ingredients (through the relationship), ignoring case.
let word = "lemon"
let inName = #Predicate<any Recipe> { $0.name.localizedStandardContains(word) }
let inInstructions = #Predicate<any Recipe> { $0.instructions.localizedStandardContains(word) }
let inIngredients = #Predicate<any Recipe> { recipe in
    recipe.ingredients.contains { ingredient in
        ingredient.model.flatMap { $0.name.localizedStandardContains(word) } ?? false
    }
}
let mentions = inName || inInstructions || inIngredients
print("Mentions \"\(word)\": " + names(try context.fetch(FamilyDescriptor(predicate: mentions, sortBy: byName))))

// The two combined.
let isBaked = #Predicate<any Recipe> { $0 is BakedGood }
let bakedWithLemon = isBaked && mentions
print(
    "Baked goods mentioning \"\(word)\": "
        + names(try context.fetch(FamilyDescriptor(predicate: bakedWithLemon, sortBy: byName))))

// The next planned recipe, with a fetch limit of 1.
let today = day(2)
let unplanned = Date.distantPast
var next = FamilyDescriptor<any Recipe>(
    predicate: #Predicate { ($0.planned ?? unplanned) >= today }, sortBy: [SortDescriptor(\.planned)])
next.fetchLimit = 1
print("Next planned from day 2: " + names(try context.fetch(next)))

// A live search of the baked goods through their ingredients.
let search = "chocolate"
let namedChocolate = #Predicate<BakedGood> { $0.name.localizedStandardContains(search) }
let withChocolate = #Predicate<BakedGood> { good in
    good.ingredients.contains { ingredient in
        ingredient.model.flatMap { $0.name.localizedStandardContains(search) } ?? false
    }
}
let chocolate = try LiveQuery(
    FetchDescriptor<BakedGood>(predicate: namedChocolate || withChocolate, sortBy: [SortDescriptor(\.id)]),
    in: container)
let queue = DispatchQueue(label: "recipes-demo.changes")
let observation = chocolate.observe(on: queue) { change in
    for removal in change.removals { print("  - \(removal.element.name) (was at \(removal.offset))") }
    for insertion in change.insertions { print("  + \(insertion.element.name) at \(insertion.offset)") }
    for move in change.moves { print("  > \(move.element.name) \(move.from) → \(move.to)") }
    for update in change.updates { print("  ~ \(update.element.name) at \(update.offset)") }
}
func show() throws {
    try chocolate.catchUp()
    queue.sync {}
    print(
        "Baked goods with \"\(search)\": "
            + (chocolate.isEmpty ? "none" : chocolate.map(\.name).joined(separator: ", ")))
}
try show()

print("Rename the ingredient cocoa to \"dark chocolate\":")
context.insert(Ingredient(id: "cocoa", name: "dark chocolate"))
try context.save()
try show()

print("Add a chocolate loaf:")
context.insert(
    BakedGood(
        id: 7, name: "Chocolate loaf", instructions: "Fold, bake", planned: day(1),
        ingredients: uses("flour", "cocoa", "eggs"), ovenMinutes: 50))
try context.save()
try show()

print("Delete the ingredient eggs:")
let head = try container.lastSequence()
context.delete(Ingredient(id: "eggs", name: "eggs"))
try context.save()
try show()
let brownies = try context.model(BakedGood.self, id: 2)!
print("Brownies now use: " + brownies.ingredients.map(\.id).joined(separator: ", "))
print("Commits for the delete: \(try container.lastSequence() - head)")
observation.cancel()
