import Foundation
import Rill
import RillWorkloads
import Synchronization

extension ServeBenchmark {
    /// `rill-bench serve follower [saves]`: the work of the live queries' follower under
    /// `rill-bench serve`, alone and repeatable, to count with `valgrind --tool=callgrind
    /// --toggle-collect='*LogFollower*run*'`: the benchmark's windowed queries (one for each
    /// subscriber) over its records, then `saves` single saves from one thread, each waited for by
    /// the queries before the next. Identifiers, quantities and prices come from a seeded
    /// generator, so that the count is the same from one run to the next.
    func runFollower(saves: Int) throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("rill-bench-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = try ModelContainer(
            for: Item.self, configurations: ModelConfiguration(url: directory, durability: .unsynced))
        var random = SeededGenerator(label: "serve follower")
        func seededUUID() -> UUID {
            withUnsafeBytes(of: (random.next(), random.next())) { UUID(uuid: $0.load(as: uuid_t.self)) }
        }
        var items = (0..<records).map(Item.random)
        for index in items.indices { items[index].id = seededUUID() }
        for item in items { container.mainContext.insert(item) }
        try container.mainContext.save()
        let events = Atomic<Int>(0)
        var queries: [RecordLiveQuery] = []
        for index in 0..<subscribers {
            queries.append(
                try RecordLiveQuery(QueryParser.parse(query(index)), store: container.store) { event in
                    if case .change = event { events.add(1, ordering: .relaxed) }
                })
        }
        let context = ModelContext(container)
        let start = now()
        for _ in 0..<saves {
            var item = items[Int.random(in: 0..<items.count, using: &random)]
            item.quantity = Int.random(in: 0..<1000, using: &random)
            item.price = Double(Int.random(in: 0..<10_000, using: &random)) / 100
            context.insert(item)
            try context.save()
            try queries.first?.catchUp()
        }
        let elapsed = now() - start
        print(
            String(
                format: "rill-bench serve follower: %d saves, %d queries, %d changes delivered, %.0f saves a second",
                saves, subscribers, events.load(ordering: .relaxed), Double(saves) / elapsed))
        withExtendedLifetime(queries) {}
    }
}
