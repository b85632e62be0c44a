import Foundation
import RillTestSupport
import Testing

@testable import Rill

/// Dishes and their parts: a to-one reference and its inverse.
private struct Dish: PersistentModel {
    var id = UUID()
    var name: String
    var parts = Related<Part>()

    static let relationships: [ModelRelationship<Dish>] = [.inverse(\.parts, of: \Part.dish, deleteRule: .cascade)]
}

private struct Part: PersistentModel {
    var id = UUID()
    var name: String
    var dish: Reference<Dish>?

    static let relationships: [ModelRelationship<Part>] = [.reference(\.dish)]
}

/// `rill query`, `rill watch` and `rill schema` as real processes, on a store whose model types
/// relate to one another.
@Suite struct RelationshipQueryCommandTests {
    let directory = TemporaryDirectory()

    @Test func queriesAndWatchesLookThroughRelationships() throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: [Dish.self, Part.self], configurations: [ModelConfiguration(url: URL(fileURLWithPath: path))])
        let context = ModelContext(container)
        let bread = Dish(name: "bread")
        let cake = Dish(name: "cake")
        var flour = Part(name: "flour", dish: Reference(bread))
        var sugar = Part(name: "sugar", dish: Reference(cake))
        [bread, cake].forEach(context.insert)
        [flour, sugar].forEach(context.insert)
        try context.save()
        let query = #"Dish where any parts.name contains[c] "FLOUR" sort by name"#
        func names(_ records: [NSDictionary]) -> [String] { records.compactMap { $0["name"] as? String } }
        func fresh() throws -> [NSDictionary] {
            try runBuilt("rill", ["query", path, query, "--json"]).output.split(separator: "\n").map {
                ResultsLines.object(String($0)) as NSDictionary
            }
        }
        #expect(names(try fresh()) == ["bread"])
        let parts = try runBuilt("rill", ["query", path, #"Part where dish.name == "cake""#])
        #expect(parts.status == 0 && parts.output.contains("sugar") && !parts.output.contains("flour"), "\(parts)")

        // Renaming a part alone moves its dish out of the search, and another's into it.
        let watcher = try RillProcess(["watch", "--json", path, query])
        #expect(watcher.wait { $0.count >= 1 })
        flour.name = "rye"
        context.insert(flour)
        let removed = try #require(try context.save())
        #expect(watcher.wait { $0.last.map(ResultsLines.sequence) == removed }, "\(watcher.output)")
        sugar.name = "Flour, fine"
        context.insert(sugar)
        let entered = try #require(try context.save())
        #expect(watcher.wait { $0.last.map(ResultsLines.sequence) == entered }, "\(watcher.output)")
        #expect(watcher.stop(SIGINT) == 0)
        let lines = watcher.output
        let initial = (ResultsLines.object(lines[0])["results"] as? [NSDictionary]) ?? []
        #expect(names(initial) == ["bread"])
        let final = try fresh()
        #expect(names(final) == ["cake"])
        #expect(ResultsLines.apply(lines.dropFirst(), to: initial) == final, "\(lines)")

        // The schema shows the relationships; a path through one is checked against its entity.
        let schema = try runBuilt("rill", ["schema", path])
        #expect(schema.output.contains("relationship parts <- Part.dish (inverse, on delete cascade)"), "\(schema)")
        #expect(schema.output.contains("relationship dish -> Dish (reference)"), "\(schema)")
        let json = try runBuilt("rill", ["schema", path, "Part", "--json"])
        #expect(
            json.output.contains(
                #""relationships":[{"field":"dish","kind":"reference","entity":"Dish","deleteRule":"nullify"}]"#),
            "\(json.output)")
        let bad = try runBuilt("rill", ["query", path, #"Part where dish.nme == "cake""#])
        #expect(bad.status == 64)
        #expect(bad.error.contains(#"Dish (through Part.dish) has no field "nme""#), "\(bad.error)")
        let sorted = try runBuilt("rill", ["query", path, "Part sort by dish.name"])
        #expect(sorted.status == 64 && sorted.error.contains("reads through the relationship Part.dish"), "\(sorted)")
    }
}
