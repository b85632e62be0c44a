import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// The predicate shapes apps write most, end to end through `ModelContext.fetch`, each against
/// the same predicate evaluated in Swift on every model.
@Suite struct PredicateShapesTests {
    struct Ingredient: Codable, Sendable, Equatable {
        var name: String
        var grams: Int
    }

    enum Course: String, Codable, Sendable, Comparable, IndexableValue {
        case starter, main, dessert
        static func < (lhs: Course, rhs: Course) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    struct Recipe: PersistentModel, Equatable {
        var id: Int
        var title: String
        var content: String
        var pages: Int
        var isRead: Bool
        var rating: Double?
        var addedAt: Date
        var plannedDate: Date?
        var course: Course
        var ingredients: [Ingredient]

        static let indexes: [ModelIndex<Recipe>] = [
            ModelIndex(\.pages), ModelIndex(\.addedAt), ModelIndex(\.plannedDate),
        ]
    }

    let directory = TemporaryDirectory()
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    func makeStore() throws -> (ModelContext, [Recipe]) {
        var random = SeededGenerator(label: "predicate shapes")
        let words = ["Café", "cafe", "CAFÉ", "Crème", "creme", "salt", "Sea Salt", "sugar", "Flour", "thyme"]
        let recipes = (0..<600).map { id in
            Recipe(
                id: id,
                title: "\(words.randomElement(using: &random)!) \(id)",
                content: (0..<3).map { _ in words.randomElement(using: &random)! }.joined(separator: " "),
                pages: Int.random(in: 50...600, using: &random),
                isRead: Bool.random(using: &random),
                rating: Bool.random(using: &random) ? Double(Int.random(in: 0...10, using: &random)) / 2 : nil,
                addedAt: Self.now.addingTimeInterval(Double(Int.random(in: -30...0, using: &random)) * 86_400),
                plannedDate: Bool.random(using: &random)
                    ? Self.now.addingTimeInterval(Double(Int.random(in: -10...10, using: &random)) * 86_400) : nil,
                course: [Course.starter, .main, .dessert].randomElement(using: &random)!,
                ingredients: (0..<Int.random(in: 0...4, using: &random)).map { _ in
                    Ingredient(
                        name: words.randomElement(using: &random)!, grams: Int.random(in: 1...500, using: &random))
                })
        }
        let container = try ModelContainer(
            for: Recipe.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        for recipe in recipes { container.mainContext.insert(recipe) }
        try container.mainContext.save()
        return (ModelContext(container), recipes)
    }

    func check(
        _ context: ModelContext, _ recipes: [Recipe], _ descriptor: FetchDescriptor<Recipe>,
        _ expected: (Recipe) -> Bool, sort: (Recipe, Recipe) -> Bool = { $0.id < $1.id }, limit: Int? = nil
    ) throws {
        var descriptor = descriptor
        descriptor.fetchLimit = limit
        let wanted = Array(recipes.filter(expected).sorted(by: sort).prefix(limit ?? .max))
        #expect(!recipes.filter(expected).isEmpty, "the shape selects nothing in this data")
        #expect(try context.fetch(descriptor).map(\.id) == wanted.map(\.id))
        #expect(try context.fetchCount(descriptor) == wanted.count)
    }

    @Test func theShapesAppsWriteMost() throws {
        let (context, recipes) = try makeStore()
        let now = Self.now
        let lastWeek = now.addingTimeInterval(-7 * 86_400)
        let query = "cafe"
        let salt = "salt"

        try check(context, recipes, FetchDescriptor(predicate: #Predicate { $0.pages > 300 && !$0.isRead })) {
            $0.pages > 300 && !$0.isRead
        }
        try check(context, recipes, FetchDescriptor(predicate: #Predicate { $0.rating != nil })) { $0.rating != nil }
        try check(context, recipes, FetchDescriptor(predicate: #Predicate { $0.addedAt > lastWeek })) {
            $0.addedAt > lastWeek
        }
        try check(
            context, recipes,
            FetchDescriptor(
                predicate: #Predicate {
                    $0.title.localizedStandardContains(query) || $0.content.localizedStandardContains(query)
                })
        ) { recipe in
            [recipe.title, recipe.content].contains {
                $0.range(of: query, options: [.caseInsensitive, .diacriticInsensitive]) != nil
            }
        }
        // The next planned recipe: `(plannedDate ?? now) > now`, sorted by plannedDate, first only.
        try check(
            context, recipes,
            FetchDescriptor(
                predicate: #Predicate { ($0.plannedDate ?? now) > now }, sortBy: [SortDescriptor(\.plannedDate)]),
            { ($0.plannedDate ?? now) > now },
            sort: { ($0.plannedDate!, $0.id) < ($1.plannedDate!, $1.id) }, limit: 1)
        try check(
            context, recipes,
            FetchDescriptor(predicate: #Predicate { $0.ingredients.contains { $0.name.contains(salt) } })
        ) {
            $0.ingredients.contains { $0.name.contains(salt) }
        }
    }

    @Test func optionalAndEnumSortKeys() throws {
        let (context, recipes) = try makeStore()
        // Optional: nil first ascending, last descending.
        let byRating = try context.fetch(
            FetchDescriptor<Recipe>(sortBy: [SortDescriptor(\.rating), SortDescriptor(\.id)]))
        let expected = recipes.sorted { lhs, rhs in
            switch (lhs.rating, rhs.rating) {
            case (nil, nil): return lhs.id < rhs.id
            case (nil, _): return true
            case (_, nil): return false
            case (let a?, let b?): return a != b ? a < b : lhs.id < rhs.id
            }
        }
        #expect(byRating.map(\.id) == expected.map(\.id))
        // An enum with a raw value sorts by its own `<`, here the raw value's.
        let byCourse = try context.fetch(FetchDescriptor<Recipe>(sortBy: [SortDescriptor(\.course, order: .reverse)]))
        #expect(
            byCourse.map(\.id)
                == recipes.sorted { $0.course != $1.course ? $0.course > $1.course : $0.id < $1.id }.map(\.id))
        // The text language sorts stored raw values and Bools (false first).
        let store = context.container.store
        let rows = try store.run(QueryParser.parse("Recipe sort by isRead, course desc limit 50"))
        let text = recipes.sorted { lhs, rhs in
            if lhs.isRead != rhs.isRead { return !lhs.isRead }
            if lhs.course != rhs.course { return lhs.course.rawValue > rhs.course.rawValue }
            return lhs.id < rhs.id
        }
        #expect(rows.map { $0.key } == text.prefix(50).map { $0.id.storageKey })
    }
}
