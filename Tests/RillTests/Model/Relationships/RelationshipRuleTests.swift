import Foundation
import RillStorage
import RillTestSupport
import Testing

@testable import Rill

/// Delete rules and references, enforced in the save's transaction.
@Suite struct RelationshipRuleTests {
    let directory = TemporaryDirectory()

    private func container(_ name: String = "store") throws -> ModelContainer {
        try ModelContainer(
            for: recipeModelTypes, configurations: [ModelConfiguration(url: directory.url.appendingPathComponent(name))]
        )
    }

    /// Every entry of the reference index, as (target entity, referrer entity, field).
    private func referenceEntries(_ store: Store) throws -> [String] {
        guard let references = try store.environment.database(named: Store.referencesDatabaseName, create: false)
        else { return [] }
        return try store.withReadTransaction { txn in
            var entries: [String] = []
            try txn.forEachEntry(in: references) { key, _ in
                let split = try #require(Store.splitReference(key))
                entries.append("\(split.target.entity)<-\(split.referrer.entity).\(split.referrer.field)")
                return true
            }
            return entries
        }
    }

    @Test func aCascadeAcrossThreeLevelsHappensInOneSave() throws {
        let container = try container()
        let context = container.mainContext
        let bread = Recipe(name: "bread")
        let soup = Recipe(name: "soup")
        context.insert(bread)
        context.insert(soup)
        var flourIDs: [UUID] = []
        for index in 0..<3 {
            let flour = Ingredient(name: "flour \(index)", recipe: Reference(bread))
            flourIDs.append(flour.id)
            context.insert(flour)
            context.insert(Note(text: "sift \(index)", ingredient: Reference(flour)))
            context.insert(Note(text: "weigh \(index)", ingredient: Reference(flour)))
        }
        let water = Ingredient(name: "water", recipe: Reference(soup))
        context.insert(water)
        context.insert(Note(text: "boil", ingredient: Reference(water)))
        try context.save()
        #expect(try referenceEntries(container.store).count == 4 + 7)

        let head = try container.store.head()
        context.delete(bread)
        try context.save()
        #expect(try container.store.head() == head + 1)
        let entry = try #require(try container.store.entries(after: head).first)
        #expect(entry.changes.filter { $0.kind == .delete }.count == 1 + 3 + 6)
        #expect(try context.fetch(FetchDescriptor<Recipe>()).map(\.name) == ["soup"])
        #expect(try context.fetch(FetchDescriptor<Ingredient>()).map(\.name) == ["water"])
        #expect(try context.fetch(FetchDescriptor<Note>()).map(\.text) == ["boil"])
        #expect(
            try referenceEntries(container.store).sorted() == [
                "Ingredient<-Note.ingredient", "Recipe<-Ingredient.recipe",
            ])
        // History shows the cascade as deletes of that commit.
        let history = try context.fetchHistory(HistoryDescriptor(after: HistoryToken(sequence: head)))
        #expect(history.count == 1)
        #expect(Set(history[0].changes.map(\.entityName)) == ["Recipe", "Ingredient", "Note"])
    }

    @Test func denyFailsTheSaveAndWritesNothing() throws {
        let container = try container()
        let context = container.mainContext
        let chef = Chef(id: 1, name: "Ada")
        context.insert(chef)
        context.insert(Recipe(name: "pie", chef: Reference(chef)))
        try context.save()
        let head = try container.store.head()
        let before = try referenceEntries(container.store)

        context.insert(Recipe(name: "tart"))
        context.delete(chef)
        let error = #expect(throws: RillError.self) { try context.save() }
        #expect(error?.code == .deleteDenied)
        #expect(error?.message.contains("Chef 1") == true)
        #expect(error?.message.contains("Recipe") == true)
        #expect(try container.store.head() == head)
        #expect(try referenceEntries(container.store) == before)
        let fresh = ModelContext(container)
        #expect(try fresh.fetch(FetchDescriptor<Chef>()).count == 1)
        #expect(try fresh.fetch(FetchDescriptor<Recipe>()).map(\.name) == ["pie"])
    }

    @Test func nullifyRemovesTheReferencesInTheSameCommit() throws {
        let container = try container()
        let context = container.mainContext
        let sweet = Tag(id: "sweet")
        let quick = Tag(id: "quick")
        context.insert(sweet)
        context.insert(quick)
        let pie = Recipe(name: "pie", tags: [Reference(sweet), Reference(quick)])
        let cake = Recipe(name: "cake", tags: [Reference(sweet)])
        context.insert(pie)
        context.insert(cake)
        try context.save()
        let head = try container.store.head()
        context.delete(sweet)
        try context.save()
        #expect(try container.store.head() == head + 1)
        let recipes = try context.fetch(FetchDescriptor<Recipe>(sortBy: [SortDescriptor(\.name)]))
        #expect(recipes.map(\.name) == ["cake", "pie"])
        #expect(recipes.map { $0.tags.map(\.id) } == [[], ["quick"]])
        let entry = try #require(try container.store.entries(after: head).first)
        #expect(entry.changes.map(\.kind).sorted { "\($0)" < "\($1)" } == [.delete, .update, .update])
        #expect(entry.changes.filter { $0.kind == .update }.allSatisfy { $0.changedFields == ["tags"] })
    }

    @Test func aRequiredReferenceWithoutACascadeDeniesTheDelete() throws {
        let container = try container()
        let context = container.mainContext
        let pie = Recipe(name: "pie")
        context.insert(pie)
        context.insert(Review(stars: 5, recipe: Reference(pie)))
        try context.save()
        let head = try container.store.head()
        context.delete(pie)
        let error = #expect(throws: RillError.self) { try context.save() }
        #expect(error?.code == .deleteDenied)
        #expect(error?.message.contains("requires") == true)
        #expect(try container.store.head() == head)
    }

    /// A denying rule holds on the save's end state: deleting the referrers too, or pointing
    /// them elsewhere, in the same save passes whatever the order of the changes; a referrer
    /// left in place still fails the save.
    @Test func denialsDoNotDependOnTheOrderOfTheSavesChanges() throws {
        let container = try container()
        let context = container.mainContext
        let ada = Chef(id: 1, name: "Ada")
        let bob = Chef(id: 2, name: "Bob")
        let pie = Recipe(name: "pie", chef: Reference(ada))
        let tart = Recipe(name: "tart")
        context.insert(ada)
        context.insert(bob)
        context.insert(pie)
        context.insert(tart)
        context.insert(Review(stars: 5, recipe: Reference(tart)))
        try context.save()

        // The chef first, then the recipe pointed at another chef.
        context.delete(ada)
        var moved = pie
        moved.chef = Reference(bob)
        context.insert(moved)
        try context.save()
        #expect(try context.fetch(FetchDescriptor<Chef>()).map(\.id) == [2])

        // The chef first, then the recipe that denies it; the recipe first, then its review.
        context.delete(bob)
        context.delete(moved)
        try context.save()
        context.delete(tart)
        try context.delete(model: Review.self)
        try context.save()
        #expect(try context.fetch(FetchDescriptor<Recipe>()).isEmpty)

        // A referrer still there at the end fails the save, whatever comes after.
        let cy = Chef(id: 3, name: "Cy")
        context.insert(cy)
        context.insert(Recipe(name: "cake", chef: Reference(cy)))
        try context.save()
        let head = try container.store.head()
        context.delete(cy)
        context.insert(Recipe(name: "bun"))
        let error = #expect(throws: RillError.self) { try context.save() }
        #expect(error?.code == .deleteDenied)
        #expect(try container.store.head() == head)
    }

    @Test func aReferenceToAMissingModelFailsTheSave() throws {
        let container = try container()
        let context = container.mainContext
        let head = try container.store.head()
        context.insert(Ingredient(name: "salt", recipe: Reference(UUID())))
        let error = #expect(throws: RillError.self) { try context.save() }
        #expect(error?.code == .danglingReference)
        #expect(try container.store.head() == head)
        context.rollback()

        // In one save, the order of the two does not matter.
        let stew = Recipe(name: "stew")
        context.insert(Ingredient(name: "salt", recipe: Reference(stew)))
        context.insert(stew)
        try context.save()
        // A reference made and removed again in one save is not checked.
        let ghost = Ingredient(name: "ghost", recipe: Reference(UUID()))
        context.insert(ghost)
        context.delete(ghost)
        try context.save()
        // Deleting the target and making a reference to it in one save fails.
        context.delete(stew)
        context.insert(Ingredient(name: "pepper", recipe: Reference(stew)))
        #expect(throws: RillError.self) { try context.save() }
    }

    @Test func prefetchingReadsTheReferencedModelsAndTheInverses() throws {
        let container = try container()
        let context = container.mainContext
        let chef = Chef(id: 7, name: "Lin")
        let pie = Recipe(name: "pie", chef: Reference(chef))
        context.insert(chef)
        context.insert(pie)
        let apple = Ingredient(name: "apple", recipe: Reference(pie))
        let sugar = Ingredient(name: "sugar", recipe: Reference(pie))
        context.insert(apple)
        context.insert(sugar)
        try context.save()

        var descriptor = FetchDescriptor<Recipe>()
        let plain = try #require(try context.fetch(descriptor).first)
        #expect(!plain.ingredients.isLoaded && plain.ingredients.isEmpty && plain.chef?.model == nil)
        descriptor.relationshipKeyPathsForPrefetching = [\.ingredients, \.chef]
        let loaded = try #require(try context.fetch(descriptor).first)
        #expect(loaded.ingredients.isLoaded)
        #expect(Set(loaded.ingredients.map(\.name)) == ["apple", "sugar"])
        #expect(loaded.chef?.model?.name == "Lin")
        var chefs = FetchDescriptor<Chef>()
        chefs.relationshipKeyPathsForPrefetching = [\.recipes]
        #expect(try context.fetch(chefs).first?.recipes.map(\.name) == ["pie"])
        var ingredients = FetchDescriptor<Ingredient>(sortBy: [SortDescriptor(\.name)])
        ingredients.relationshipKeyPathsForPrefetching = [\.recipe]
        #expect(try context.fetch(ingredients).map { $0.recipe?.model?.name } == ["pie", "pie"])
        // The inverse is never stored: the record holds no `ingredients` field.
        let entity = try #require(try container.store.entity(named: "Recipe"))
        let bytes = try #require(try container.store.record(of: entity, key: pie.id.storageKey))
        let record = try bytes.withUnsafeBytes { try RecordValue(record: $0) }
        guard case .map(let fields) = record else { Issue.record("not a map"); return }
        #expect(!fields.contains { $0.name == "ingredients" })
    }
}
