import Dispatch
import Foundation
import Rill
import RillWorkloads

/// A recipe of the relationship measure: its ingredients are the inverse of their reference.
struct Dish: PersistentModel {
    var id: Int
    var name: String
    var cuisine: Int
    var ingredients = Related<Component>()

    static let indexes: [ModelIndex<Dish>] = [ModelIndex(\.cuisine)]
    static let relationships: [ModelRelationship<Dish>] = [
        .inverse(\.ingredients, of: \Component.dish, deleteRule: .cascade)
    ]
}

/// An ingredient of the relationship measure.
struct Component: PersistentModel {
    var id: Int
    var name: String
    var dish: Reference<Dish>?

    static let relationships: [ModelRelationship<Component>] = [.reference(\.dish)]
}

extension LiveBenchmark {
    /// Live queries whose predicates look through a relationship, at two store sizes: each save
    /// renames one ingredient, which moves its recipe into or out of the searches that mention the
    /// old or the new name. Beside re-running the affected queries after each save.
    func relationships(directory: URL) throws {
        var rows: [(records: Int, p50: Double, p99: Double, refetch: Double, affected: Double)] = []
        for dishes in [max(records / 10, 1_000), records] {
            rows.append(try relationshipRound(dishes: dishes, directory: directory.appendingPathComponent("\(dishes)")))
        }
        var table = ComparisonTable(
            title:
                "a related model changes → every affected observer notified (\(queryCount) queries through "
                + "recipe.ingredients, one ingredient renamed per save)",
            baselineName: "re-fetch affected")
        for row in rows {
            table.rows.append(
                .init(
                    name: "p50 per save, \(row.records) recipes", rill: row.p50 * 1000, baseline: row.refetch * 1000,
                    unit: "ms", higherIsBetter: false, target: "flat in records", ratio: row.refetch / row.p50))
        }
        for row in rows {
            table.rows.append(
                .init(
                    name: "p99 per save, \(row.records) recipes", rill: row.p99 * 1000, baseline: row.refetch * 1000,
                    unit: "ms", higherIsBetter: false, target: "", ratio: nil))
        }
        table.note =
            String(
                format: "ratio: re-fetch ÷ rill; %.1f and %.1f queries affected per save on average; ",
                rows[0].affected, rows[1].affected)
            + String(
                format: "p50 at %d recipes ÷ at %d: %.2f×", rows[1].records, rows[0].records,
                rows[1].p50 / max(rows[0].p50, 1e-9))
            + "; each recipe has 5 ingredients, a query is one cuisine (of 1,000, indexed) whose ingredients mention a word"
        print(table.render())
    }

    private func relationshipRound(
        dishes: Int, directory: URL
    ) throws -> (
        records: Int, p50: Double, p99: Double, refetch: Double, affected: Double
    ) {
        var configuration = ModelConfiguration(url: directory)
        configuration.initialMapSize = 1 << 30
        configuration.durability = .unsynced
        let container = try ModelContainer(for: Dish.self, Component.self, configurations: configuration)
        let context = ModelContext(container)
        var random = Self.workload(label: "relationship live queries, \(dishes) recipes")
        let words = (0..<200).map { "word\($0)" }
        for id in 0..<dishes {
            let dish = Dish(id: id, name: "dish \(id)", cuisine: id % 1_000)
            context.insert(dish)
            for part in 0..<5 {
                context.insert(
                    Component(
                        id: id * 5 + part, name: words.randomElement(using: &random)!, dish: Reference(dish.id)))
            }
        }
        try context.save()

        var descriptors: [FetchDescriptor<Dish>] = []
        var wordsOfCuisine: [Int: [String]] = [:]
        for index in 0..<queryCount {
            let cuisine = index % 1_000
            let word = words.randomElement(using: &random)!
            wordsOfCuisine[cuisine, default: []].append(word)
            descriptors.append(
                FetchDescriptor<Dish>(
                    predicate: #Predicate { dish in
                        dish.cuisine == cuisine && dish.ingredients.contains { $0.name == word }
                    }, sortBy: [SortDescriptor(\.id)]))
        }
        let arrivals = Arrivals()
        var queries: [LiveQuery<Dish>] = []
        var observations: [LiveObservation] = []
        for (index, descriptor) in descriptors.enumerated() {
            let query = try LiveQuery(descriptor, in: container)
            observations.append(
                query.observe(on: arrivals.queue) { change in
                    arrivals.latest[change.sequence] = now()
                    arrivals.queries[change.sequence, default: []].append(index)
                })
            queries.append(query)
        }
        var latencies: [Double] = []
        var refetches: [Double] = []
        var affectedCounts: [Int] = []
        for round in 0..<max(saveCount / 4, 50) {
            // Half the renames give the ingredient a word a query of its recipe's cuisine looks for.
            let id = Int.random(in: 0..<(dishes * 5), using: &random)
            let searched = wordsOfCuisine[(id / 5) % 1_000] ?? []
            let name =
                Bool.random(using: &random) && !searched.isEmpty
                ? searched.randomElement(using: &random)! : words.randomElement(using: &random)!
            context.insert(Component(id: id, name: name, dish: Reference(id / 5)))
            let called = now()
            guard let sequence = try context.save() else { continue }
            try queries[0].catchUp()
            let (arrived, affected) = arrivals.queue.sync {
                (arrivals.latest[sequence], arrivals.queries[sequence] ?? [])
            }
            guard let arrived, !affected.isEmpty else { continue }
            latencies.append(arrived - called)
            affectedCounts.append(affected.count)
            if round % 4 == 0 {
                refetches.append(
                    try measure { for index in affected { _ = try context.fetch(queries[index].descriptor) } })
            }
        }
        observations.removeAll()
        queries.removeAll()
        latencies.sort()
        refetches.sort()
        return (
            dishes, percentile(latencies, 0.5), percentile(latencies, 0.99), percentile(refetches, 0.5),
            Double(affectedCounts.reduce(0, +)) / Double(max(affectedCounts.count, 1))
        )
    }
}
