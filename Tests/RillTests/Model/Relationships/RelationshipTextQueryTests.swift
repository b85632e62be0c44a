import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Text queries whose predicates look through relationships, against the typed fetch of the same
/// `#Predicate` (itself held to Swift's evaluation in `RelationshipPredicateTests`) and a brute
/// force over the data, on random data with references that are null.
@Suite struct RelationshipTextQueryTests {
    let directory = TemporaryDirectory()

    private static let words = ["flour", "sugar", "salt", "butter", "egg", "milk", "yeast"]

    /// Random recipes, ingredients (some in no recipe), chefs (some recipes without one) and
    /// tags (some recipes without any), saved.
    struct Data {
        var recipes: [Recipe] = []
        var ingredients: [Ingredient] = []
        var chefs: [Chef] = []
        var tags: [Tag] = []
    }

    static func makeData(_ random: inout SeededGenerator, into context: ModelContext) throws -> Data {
        var data = Data()
        data.tags = (0..<4).map { Tag(id: "tag\($0)") }
        data.chefs = (0..<3).map { Chef(id: $0, name: "chef \($0)") }
        data.tags.forEach(context.insert)
        data.chefs.forEach(context.insert)
        for index in 0..<40 {
            let tags = data.tags.filter { _ in Bool.random(using: &random) }.map { Reference($0) }
            let chef = Int.random(in: -1..<data.chefs.count, using: &random)
            data.recipes.append(
                Recipe(
                    name: "recipe \(index % 13)", minutes: Int.random(in: 0...60, using: &random), tags: tags,
                    chef: chef < 0 ? nil : Reference(data.chefs[chef])))
        }
        data.recipes.forEach(context.insert)
        for _ in 0..<150 {
            let word = words.randomElement(using: &random)!
            let owner = Int.random(in: -5..<data.recipes.count, using: &random)
            data.ingredients.append(
                Ingredient(
                    name: "\(word) \(Int.random(in: 0..<3, using: &random))",
                    grams: Int.random(in: 0...500, using: &random),
                    recipe: owner < 0 ? nil : Reference(data.recipes[owner])))
        }
        data.ingredients.forEach(context.insert)
        try context.save()
        return data
    }

    @Test func textQueriesThroughRelationshipsMatchTypedFetchesAndBruteForce() throws {
        var random = SeededGenerator(label: "relationship text queries")
        let seed = random.seed
        let container = try ModelContainer(
            for: recipeModelTypes, configurations: [ModelConfiguration(url: directory.url.appendingPathComponent("s"))])
        let context = container.mainContext
        let store = container.store
        let data = try Self.makeData(&random, into: context)
        let ingredientsOf = Dictionary(grouping: data.ingredients.filter { $0.recipe != nil }) { $0.recipe!.id }
        let recipeByID = Dictionary(uniqueKeysWithValues: data.recipes.map { ($0.id, $0) })
        let chefByID = Dictionary(uniqueKeysWithValues: data.chefs.map { ($0.id, $0) })

        func keys(_ text: String) throws -> Set<[UInt8]> {
            let query = try QueryParser.parse(text)
            let rows = try store.run(query)
            let scanned = try store.run(query, forceScan: true)
            #expect(rows.map(\.key) == scanned.map(\.key), "\(text): plan and scan differ, seed \(seed)")
            return Set(rows.map(\.key))
        }
        func check(_ text: String, _ predicate: Predicate<Recipe>?, expected: (Recipe) -> Bool) throws {
            let found = try keys("Recipe where " + text)
            let brute = Set(data.recipes.filter(expected).map(\.id.storageKey))
            #expect(found == brute, "Recipe where \(text): against a brute force, seed \(seed)")
            if let predicate {
                let typed = Set(try context.fetch(FetchDescriptor(predicate: predicate)).map(\.id.storageKey))
                #expect(found == typed, "Recipe where \(text): against the typed fetch, seed \(seed)")
            }
        }
        func check(_ text: String, _ predicate: Predicate<Ingredient>, expected: (Ingredient) -> Bool) throws {
            let found = try keys("Ingredient where " + text)
            let brute = Set(data.ingredients.filter(expected).map(\.id.storageKey))
            let typed = Set(try context.fetch(FetchDescriptor(predicate: predicate)).map(\.id.storageKey))
            #expect(found == brute, "Ingredient where \(text): against a brute force, seed \(seed)")
            #expect(found == typed, "Ingredient where \(text): against the typed fetch, seed \(seed)")
        }

        for _ in 0..<10 {
            let word = Self.words.randomElement(using: &random)!
            let grams = Int.random(in: 0...500, using: &random)
            let minutes = Int.random(in: 0...60, using: &random)
            let count = Int.random(in: 0...6, using: &random)
            let name = "recipe \(Int.random(in: 0..<13, using: &random))"
            let tag = "tag\(Int.random(in: 0..<5, using: &random))"
            let chef = "chef \(Int.random(in: 0..<3, using: &random))"
            func ingredients(_ recipe: Recipe) -> [Ingredient] { ingredientsOf[recipe.id, default: []] }

            // The inverse: the ingredients that reference the recipe.
            try check(
                "any ingredients.name contains \"\(word)\"",
                #Predicate { recipe in recipe.ingredients.contains { $0.name.contains(word) } },
                expected: { ingredients($0).contains { $0.name.contains(word) } })
            try check(
                "any ingredients.name contains[c] \"\(word.uppercased())\"", nil,
                expected: { ingredients($0).contains { $0.name.contains(word) } })
            try check(
                "minutes > \(minutes) and any ingredients ($.grams > \(grams) and $.name beginswith \"\(word)\")",
                #Predicate { recipe in
                    recipe.minutes > minutes
                        && recipe.ingredients.contains { $0.grams > grams && $0.name.starts(with: word) }
                },
                expected: { recipe in
                    recipe.minutes > minutes
                        && ingredients(recipe).contains { $0.grams > grams && $0.name.hasPrefix(word) }
                })
            try check(
                "all ingredients.grams < \(grams) or name contains \"\(word)\"",
                #Predicate { recipe in
                    recipe.ingredients.allSatisfy { $0.grams < grams } || recipe.name.contains(word)
                },
                expected: { recipe in
                    ingredients(recipe).allSatisfy { $0.grams < grams } || recipe.name.contains(word)
                })
            try check(
                "count(ingredients) >= \(count)", #Predicate { $0.ingredients.count >= count },
                expected: { ingredients($0).count >= count })
            // A to-many reference: its records, or its stored identifiers.
            try check(
                "any tags.id == \"\(tag)\"", #Predicate { recipe in recipe.tags.contains { $0.model?.id == tag } },
                expected: { $0.tags.contains { $0.id == tag } })
            try check(
                "any tags ($.id == \"\(tag)\") or count(tags) == 0", nil,
                expected: { $0.tags.isEmpty || $0.tags.contains { $0.id == tag } })
            try check(
                "any tags == \"\(tag)\"", nil, expected: { $0.tags.contains { $0.id == tag } })
            // A to-one reference that may be null.
            try check(
                "chef.name == \"\(chef)\"", #Predicate { $0.chef?.model?.name == chef },
                expected: { $0.chef.flatMap { chefByID[$0.id] }?.name == chef })
            try check(
                "chef.name == nil", #Predicate { $0.chef?.model?.name == nil }, expected: { $0.chef == nil })
            try check(
                "recipe.name == \"\(name)\"", #Predicate { $0.recipe?.model?.name == name },
                expected: { $0.recipe.flatMap { recipeByID[$0.id] }?.name == name })
            try check(
                "recipe.minutes > \(minutes) or name contains \"\(word)\"",
                #Predicate { ingredient in
                    ingredient.recipe?.model?.minutes ?? -1 > minutes || ingredient.name.contains(word)
                },
                expected: { ingredient in
                    (ingredient.recipe.flatMap { recipeByID[$0.id] }?.minutes ?? -1) > minutes
                        || ingredient.name.contains(word)
                })
            try check(
                "not (recipe.name == \"\(name)\") and grams >= \(grams)",
                #Predicate { !($0.recipe?.model?.name == name) && $0.grams >= grams },
                expected: { !($0.recipe.flatMap { recipeByID[$0.id] }?.name == name) && $0.grams >= grams })
            // The reference alone is its stored identifier.
            let owner = data.recipes.randomElement(using: &random)!.id
            try check(
                "recipe == \"\(owner.uuidString)\" and grams >= \(grams)",
                #Predicate { $0.recipe?.id == owner && $0.grams >= grams },
                expected: { $0.recipe?.id == owner && $0.grams >= grams })
        }
        // Sorted and windowed: the same order as the typed fetch.
        let sorted = try store.run(
            QueryParser.parse("Recipe where any ingredients.grams > 250 sort by minutes desc, name limit 7 offset 2"))
        var descriptor = FetchDescriptor<Recipe>(
            predicate: #Predicate { $0.ingredients.contains { $0.grams > 250 } },
            sortBy: [SortDescriptor(\.minutes, order: .reverse), SortDescriptor(\.name)])
        descriptor.fetchLimit = 7
        descriptor.fetchOffset = 2
        #expect(sorted.map(\.key) == (try context.fetch(descriptor)).map(\.id.storageKey), "seed \(seed)")
        // Rows are the stored records: nothing read through a relationship is added to them.
        if case .map(let fields) = try store.run(QueryParser.parse("Recipe where count(ingredients) >= 0"))[0].record {
            #expect(!fields.contains { $0.name.hasPrefix("\u{0}") || $0.name == "ingredients" })
        }
    }

    @Test func pathsThroughRelationshipsAreNeverServedByAnIndex() throws {
        let container = try ModelContainer(
            for: recipeModelTypes, configurations: [ModelConfiguration(url: directory.url.appendingPathComponent("s"))])
        let context = container.mainContext
        let store = container.store
        let recipe = Recipe(name: "bread")
        context.insert(recipe)
        context.insert(Ingredient(name: "flour", recipe: Reference(recipe)))
        try context.save()
        _ = try store.declare([
            EntityDeclaration(name: "Ingredient", identifierKind: .uuid, indexes: [[["recipe"]], [["name"]]])
        ])

        let stored = try store.explain(QueryParser.parse("Ingredient where recipe == \"\(recipe.id.uuidString)\""))
        #expect(stored.contains("index Ingredient(recipe)") && !stored.contains("reads Ingredient.recipe"), "\(stored)")
        let through = try store.explain(QueryParser.parse("Ingredient where recipe.name == \"bread\""))
        #expect(!through.contains("index") || through.contains("no index serves it"), "\(through)")
        #expect(through.contains("scan") && through.contains("reads Ingredient.recipe"), "\(through)")
        // The other conditions still narrow the candidates.
        let narrowed = try store.explain(
            QueryParser.parse("Ingredient where name == \"flour\" and recipe.name == \"bread\""))
        #expect(narrowed.contains("index Ingredient(name)"), "\(narrowed)")
        #expect(try store.run(QueryParser.parse("Ingredient where recipe.name == \"bread\"")).count == 1)
        #expect(
            try store.run(QueryParser.parse("Ingredient where name == \"flour\" and recipe.name == \"cake\"")).isEmpty)
    }

    @Test func pathsThroughRelationshipsAreCheckedAgainstTheRelatedEntity() throws {
        let container = try ModelContainer(
            for: recipeModelTypes, configurations: [ModelConfiguration(url: directory.url.appendingPathComponent("s"))])
        let context = container.mainContext
        let store = container.store
        let recipe = Recipe(name: "bread")
        context.insert(recipe)
        context.insert(Ingredient(name: "flour", recipe: Reference(recipe)))
        // More recipes than the sample a shape is learned from.
        for index in 0..<80 { context.insert(Recipe(name: "recipe \(index)")) }
        try context.save()

        func error(_ text: String) -> RillError? {
            do {
                _ = try store.run(QueryParser.parse(text))
                return nil
            } catch {
                return error as? RillError
            }
        }
        let unknown = error("Ingredient where recipe.nmae == \"bread\"")
        #expect(unknown?.code == .unknownField)
        #expect(unknown?.message.contains("Recipe (through Ingredient.recipe) has no field \"nmae\"") == true)
        #expect(unknown?.message.contains("did you mean name?") == true)
        #expect(unknown?.message.hasPrefix("column 18:") == true, "\(String(describing: unknown))")
        let inverse = error("Recipe where any ingredients.nam contains \"flour\"")
        #expect(inverse?.code == .unknownField)
        #expect(inverse?.message.contains("Ingredient (through Recipe.ingredients) has no field \"nam\"") == true)
        let element = error("Recipe where any ingredients ($.gram > 3)")
        #expect(element?.code == .unknownField, "\(String(describing: element))")
        #expect(element?.message.contains("Recipe.ingredients") == true, "\(String(describing: element))")
        let kind = error("Ingredient where recipe.minutes == \"ten\"")
        #expect(kind?.code == .kindMismatch)
        #expect(kind?.message.contains("Recipe.minutes (through Ingredient.recipe) is a number") == true)
        // One level: the related record's own reference is its identifier.
        let deeper = error("Ingredient where recipe.chef.name == \"Ada\"")
        #expect(deeper?.code == .unknownField, "\(String(describing: deeper))")
        #expect(deeper?.message.contains("Recipe.chef (through Ingredient.recipe)") == true)
        let sort = error("Ingredient where grams > 0 sort by recipe.name")
        #expect(sort?.code == .unknownField)
        #expect(sort?.message.contains("relationship Ingredient.recipe") == true, "\(String(describing: sort))")
        // The stored reference alone is the identifier, a string here.
        #expect(error("Ingredient where recipe == \"\(recipe.id.uuidString)\"") == nil)
        #expect(error("Recipe where count(ingredients) > 0") == nil)
        // Every related record is read before a field is refused: past the sample of the shape.
        #expect(error("Ingredient where recipe.rarest == 5")?.code == .unknownField)
        #expect(error("Recipe where any ingredients ($.grams > 3 and $.name != nil)") == nil)
    }
}

/// Crates and their items, in two versions: version 2 renames `name` to `label` and adds `weight`.
private enum CrateModels {
    struct CrateV1: PersistentModel {
        static let entityName = "Crate"
        var id: String
        var items = Related<ItemV1>()

        static let relationships: [ModelRelationship<CrateV1>] = [.inverse(\.items, of: \ItemV1.crate)]
    }

    struct ItemV1: PersistentModel {
        static let entityName = "Item"
        var id: String
        var name: String
        var crate: Reference<CrateV1>?

        static let relationships: [ModelRelationship<ItemV1>] = [.reference(\.crate)]
    }

    struct CrateV2: PersistentModel {
        static let entityName = "Crate"
        var id: String
        var items = Related<ItemV2>()

        static let relationships: [ModelRelationship<CrateV2>] = [.inverse(\.items, of: \ItemV2.crate)]
    }

    struct ItemV2: PersistentModel {
        static let entityName = "Item"
        var id: String
        var label: String
        var weight: Int = 5
        var crate: Reference<CrateV2>?

        static let relationships: [ModelRelationship<ItemV2>] = [.reference(\.crate)]
        static let evolution = ModelEvolution<ItemV2>(.added(\.weight, default: 5), .renamed(\.label, from: "name"))
    }
}

extension RelationshipTextQueryTests {
    @Test func relatedRecordsOfAnEarlierVersionReadAsTheCurrentSchema() throws {
        let url = directory.url.appendingPathComponent("evolved")
        do {
            let old = try ModelContainer(
                for: [CrateModels.CrateV1.self, CrateModels.ItemV1.self], configurations: [ModelConfiguration(url: url)]
            )
            let context = old.mainContext
            for id in ["c1", "c2", "c3"] { context.insert(CrateModels.CrateV1(id: id)) }
            context.insert(CrateModels.ItemV1(id: "i1", name: "apple", crate: Reference("c1")))
            context.insert(CrateModels.ItemV1(id: "i2", name: "pear", crate: Reference("c2")))
            try context.save()
        }
        let container = try ModelContainer(
            for: [CrateModels.CrateV2.self, CrateModels.ItemV2.self], configurations: [ModelConfiguration(url: url)])
        let context = container.mainContext
        context.insert(CrateModels.ItemV2(id: "i3", label: "plum", weight: 9, crate: Reference("c3")))
        try context.save()
        let store = container.store
        func crates(_ text: String) throws -> [String] {
            try store.run(QueryParser.parse(text)).compactMap {
                if case .string(let id) = QueryEvaluator.read(["id"], from: $0.record) { return id }
                return nil
            }
        }
        func typed(_ predicate: Predicate<CrateModels.CrateV2>) throws -> [String] {
            try context.fetch(FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.id)])).map(\.id)
        }
        #expect(try crates(#"Crate where any items.label == "apple""#) == ["c1"])
        #expect(try typed(#Predicate { $0.items.contains { $0.label == "apple" } }) == ["c1"])
        #expect(try crates("Crate where any items.weight == 5") == ["c1", "c2"])
        #expect(try typed(#Predicate { $0.items.contains { $0.weight == 5 } }) == ["c1", "c2"])
        #expect(try crates("Crate where any items ($.weight > 5 or $.label beginswith \"p\")") == ["c2", "c3"])
        // A live query reads them so too, and follows a rename.
        let events = RelationshipTextLiveQueryTests.Events()
        let live = try RecordLiveQuery(
            QueryParser.parse(#"Crate where any items.label contains "pe""#), store: store
        ) { events.append($0) }
        #expect(live.results.rows.count == 1)
        context.insert(CrateModels.ItemV2(id: "i1", label: "peach", crate: Reference("c1")))
        try context.save()
        try live.catchUp()
        #expect(live.results.rows.count == 2)
    }
}
