import Foundation
import Rill
import RillWorkloads

extension QueryBenchmark {
    /// The operations `rill-bench query [records] [runs] loop-<name>` repeats after the Rill load,
    /// in place of the comparisons: one operation over and over, to profile (`perf record`, or
    /// `valgrind --tool=callgrind` with a number of runs, whose count of instructions is the same
    /// from one run to the next).
    static let loops: [String: String] = [
        "loop-fetch": "the one-row #Predicate fetch, code == x",
        "loop-text": "the one-row text query, Entry where code == x",
        "loop-range": "the #Predicate fetch amount > x sort by amount, limit 20",
        "loop-range-text": "the text query Entry where amount > x sort by amount limit 20",
        "loop-range-desc": "the #Predicate fetch amount < x sort by amount descending, limit 20",
        "loop-range-record": "loop-range of a model that reads its record (RecordEntry)",
        "loop-range-desc-record": "loop-range-desc of a model that reads its record (RecordEntry)",
        "loop-range-desc-text": "the text query Entry where amount < x sort by amount desc limit 20",
        "loop-category": "the fifty-row #Predicate fetch, category == x",
        "loop-category-text": "the fifty-row text query, Entry where category == x",
        "loop-fetch-record": "loop-fetch of a model that reads its record (RecordEntry)",
        "loop-category-record": "loop-category of a model that reads its record (RecordEntry)",
        "loop-read": "an empty read transaction",
        "loop-sqlite-fetch": "SQLite's one-row query, code = ?, after SQLite's load",
        "loop-sqlite-category": "SQLite's fifty-row query, category = ?, after SQLite's load",
        "loop-scan": "the full-scan text query, Entry where name contains \"99999\"",
        "loop-scan-predicate": "the full-scan #Predicate fetch, name contains \"99999\"",
        "loop-scan-amount": "the text query Entry where amount > 99990.0, forced to a full scan",
        "loop-scan-fields": "the text query Entry where code < category, forced to a full scan",
        "loop-scan-coalesce": "the text query Entry where (amount ?? 0.0) > 99990.0, forced to a full scan",
        "loop-scan-arithmetic": "the text query Entry where amount * 2.0 > 199980.0, forced to a full scan",
    ]

    /// Runs `loop` over the arguments, `runs` times or for 15 seconds, and prints the rate.
    func runLoop(_ loop: String, store: Store, context: ModelContext) throws {
        var random = SeededGenerator(label: "query arguments")
        let codes = (0..<argumentCount).map { _ in Int.random(in: 0..<records, using: &random) }
        let amounts = (0..<argumentCount).map { _ in Double(Int.random(in: 0..<9_000_000, using: &random)) / 100 }
        try repeating(loop) { count in
            let code = codes[count % codes.count]
            switch loop {
            case "loop-fetch":
                _ = try context.fetch(FetchDescriptor(predicate: #Predicate<Entry> { $0.code == code }))
            case "loop-text":
                _ = try store.run(QueryParser.parse("Entry where code == \(code)"))
            case "loop-category":
                let category = code % 20_000
                _ = try context.fetch(FetchDescriptor(predicate: #Predicate<Entry> { $0.category == category }))
            case "loop-fetch-record":
                _ = try context.fetch(FetchDescriptor(predicate: #Predicate<RecordEntry> { $0.code == code }))
            case "loop-category-record":
                let category = code % 20_000
                _ = try context.fetch(FetchDescriptor(predicate: #Predicate<RecordEntry> { $0.category == category }))
            case "loop-category-text":
                _ = try store.run(QueryParser.parse("Entry where category == \(code % 20_000)"))
            case "loop-range":
                let amount = amounts[count % amounts.count]
                _ = try context.fetch(Self.first20(#Predicate<Entry> { $0.amount > amount }, SortDescriptor(\.amount)))
            case "loop-range-record":
                let amount = amounts[count % amounts.count]
                _ = try context.fetch(
                    Self.first20(#Predicate<RecordEntry> { $0.amount > amount }, SortDescriptor(\.amount)))
            case "loop-range-desc-record":
                let amount = amounts[count % amounts.count]
                _ = try context.fetch(
                    Self.first20(
                        #Predicate<RecordEntry> { $0.amount < amount }, SortDescriptor(\.amount, order: .reverse)))
            case "loop-range-text":
                _ = try store.run(
                    QueryParser.parse("Entry where amount > \(amounts[count % amounts.count]) sort by amount limit 20"))
            case "loop-range-desc":
                let amount = amounts[count % amounts.count]
                _ = try context.fetch(
                    Self.first20(#Predicate<Entry> { $0.amount < amount }, SortDescriptor(\.amount, order: .reverse)))
            case "loop-range-desc-text":
                _ = try store.run(
                    QueryParser.parse(
                        "Entry where amount < \(amounts[count % amounts.count]) sort by amount desc limit 20"))
            case "loop-scan":
                _ = try store.run(QueryParser.parse("Entry where name contains \"99999\""), forceScan: true)
            case "loop-scan-predicate":
                _ = try context.fetch(FetchDescriptor(predicate: #Predicate<Entry> { $0.name.contains("99999") }))
            case "loop-scan-amount":
                _ = try store.run(QueryParser.parse("Entry where amount > 99990.0"), forceScan: true)
            case "loop-scan-fields":
                _ = try store.run(QueryParser.parse("Entry where code < category"), forceScan: true)
            case "loop-scan-arithmetic":
                _ = try store.run(QueryParser.parse("Entry where amount * 2.0 > 199980.0"), forceScan: true)
            case "loop-scan-coalesce":
                _ = try store.run(QueryParser.parse("Entry where (amount ?? 0.0) > 99990.0"), forceScan: true)
            default:
                _ = try store.read { _ in 1 }
            }
        }
    }

    /// Runs the SQLite `loop` over the arguments, `runs` times or for 15 seconds, and prints the
    /// rate: SQLite's side of a loop, to profile beside Rill's.
    func runLoop(_ loop: String, table: EntryTable) {
        var random = SeededGenerator(label: "query arguments")
        let codes = (0..<argumentCount).map { _ in Int.random(in: 0..<records, using: &random) }
        repeating(loop) { count in
            let code = codes[count % codes.count]
            _ = loop == "loop-sqlite-category" ? table.entries(category: code % 20_000) : table.entries(code: code)
        }
    }

    /// Calls `body` with the run's number, `runs` times or for 15 seconds, and prints the rate.
    private func repeating(_ loop: String, _ body: (Int) throws -> Void) rethrows {
        let limit = loopRuns ?? Int.max
        let start = now()
        var count = 0
        while count < limit, loopRuns != nil || now() - start < 15 {
            try body(count)
            count += 1
        }
        let elapsed = now() - start
        print(
            String(
                format: "rill-bench query %@ (%@): %d runs in %.2f s, %.0f a second", loop, Self.loops[loop] ?? "",
                count, elapsed, Double(count) / elapsed))
    }

    /// The first 20 models matching `predicate` in `sort`'s order.
    static func first20<Model: PersistentModel>(
        _ predicate: Predicate<Model>, _ sort: SortDescriptor<Model>
    ) -> FetchDescriptor<Model> {
        var descriptor = FetchDescriptor(predicate: predicate, sortBy: [sort])
        descriptor.fetchLimit = 20
        return descriptor
    }
}
