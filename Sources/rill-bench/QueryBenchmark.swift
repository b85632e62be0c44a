import Foundation
import Rill
import RillWorkloads

/// The model of the query benchmark.
struct Entry: PersistentModel {
    var id: Int
    /// Unique: an equality on it returns one row.
    var code: Int
    /// 20,000 distinct values: an equality on it returns 50 rows of a million.
    var category: Int
    var amount: Double
    var createdAt: Date
    var name: String

    static let indexes: [ModelIndex<Entry>] = [ModelIndex(\.code), ModelIndex(\.category), ModelIndex(\.amount)]
}

/// `rill-bench query`: text queries over a million records, each beside the same query forced to a full scan.
struct QueryBenchmark {
    var records = 1_000_000

    func run() throws {
        let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("rill-bench-\(UUID())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        print("rill-bench query: \(records) records; every query also forced to a full scan, in the same run\n")
        var configuration = ModelConfiguration(url: scratch)
        configuration.durability = .unsynced
        // Loading is not what is measured here: start with room for it, so the one big save is not replayed as the map grows.
        configuration.initialMapSize = 2 << 30
        let container = try ModelContainer(for: Entry.self, configurations: configuration)
        let context = container.mainContext
        let loading = try measure {
            for index in 0..<records {
                context.insert(
                    Entry(
                        id: index, code: (index &* 7_919) % records, category: index % 20_000,
                        amount: Double((index &* 104_729) % 10_000_000) / 100,
                        createdAt: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)), name: "entry \(index)"))
            }
            try context.save()
        }
        print(
            String(
                format: "loaded in %.1f s (%.0f records/s, indexes maintained)\n", loading, Double(records) / loading))
        let store = container.store
        // Arguments come from a generator in memory: the system's makes a system call for every
        // number, which the query loops would measure along with the queries.
        var random = SeededGenerator(label: "query arguments")

        func rate(_ text: @escaping () -> String, minimumSeconds: Double = 1, forceScan: Bool) throws -> (Double, Int) {
            var count = 0
            var rows = 0
            let start = now()
            repeat {
                rows = try store.run(QueryParser.parse(text()), forceScan: forceScan).count
                count += 1
            } while now() - start < minimumSeconds
            return (Double(count) / (now() - start), rows)
        }

        let one = { "Entry where code == \(Int.random(in: 0..<records, using: &random))" }
        let fifty = { "Entry where category == \(Int.random(in: 0..<20_000, using: &random))" }
        let range = {
            "Entry where amount > \(Double(Int.random(in: 0..<9_000_000, using: &random)) / 100) sort by amount limit 20"
        }
        let scan = "Entry where name contains \"99999\""

        // The same queries through the typed API: #Predicate, translated and planned for every fetch.
        func typedRate(_ make: () -> FetchDescriptor<Entry>) throws -> (Double, Int) {
            var count = 0
            var rows = 0
            let start = now()
            repeat {
                rows = try context.fetch(make()).count
                count += 1
            } while now() - start < 1
            return (Double(count) / (now() - start), rows)
        }
        let (typedOne, _) = try typedRate {
            let code = Int.random(in: 0..<records, using: &random)
            return FetchDescriptor(predicate: #Predicate { $0.code == code })
        }
        let (typedFifty, _) = try typedRate {
            let category = Int.random(in: 0..<20_000, using: &random)
            return FetchDescriptor(predicate: #Predicate { $0.category == category })
        }
        let (typedRange, _) = try typedRate {
            let amount = Double(Int.random(in: 0..<9_000_000, using: &random)) / 100
            var descriptor = FetchDescriptor(
                predicate: #Predicate<Entry> { $0.amount > amount }, sortBy: [SortDescriptor(\.amount)])
            descriptor.fetchLimit = 20
            return descriptor
        }

        let (oneIndexed, oneRows) = try rate(one, forceScan: false)
        let (oneScan, _) = try rate(one, minimumSeconds: 0, forceScan: true)
        let (fiftyIndexed, fiftyRows) = try rate(fifty, forceScan: false)
        let (fiftyScan, _) = try rate(fifty, minimumSeconds: 0, forceScan: true)
        let (rangeIndexed, rangeRows) = try rate(range, forceScan: false)
        let (rangeScan, _) = try rate(range, minimumSeconds: 0, forceScan: true)
        let scanStart = now()
        let scanRows = try store.run(QueryParser.parse(scan), forceScan: true).count
        let scanRate = Double(records) / (now() - scanStart)
        let typedScanStart = now()
        let typedScanRows = try context.fetch(
            FetchDescriptor<Entry>(predicate: #Predicate { $0.name.contains("99999") })
        ).count
        let typedScanRate = Double(records) / (now() - typedScanStart)

        var table = ComparisonTable(title: "query (1 core)", baselineName: "full scan")
        table.note = "ratio: rill ÷ the same query forced to a full scan, measured in this run"
        table.rows = [
            .init(
                name: "indexed equality, \(oneRows) row, text", rill: oneIndexed, baseline: oneScan, unit: "queries/s",
                higherIsBetter: true, target: "≥ 100,000 q/s", ratio: oneIndexed / oneScan),
            .init(
                name: "indexed equality, \(oneRows) row, #Predicate", rill: typedOne, baseline: oneScan,
                unit: "queries/s",
                higherIsBetter: true, target: "≥ 100,000 q/s", ratio: typedOne / oneScan),
            .init(
                name: "indexed equality, \(fiftyRows) rows, text", rill: fiftyIndexed, baseline: fiftyScan,
                unit: "queries/s",
                higherIsBetter: true, target: "≥ 10,000 q/s", ratio: fiftyIndexed / fiftyScan),
            .init(
                name: "indexed equality, \(fiftyRows) rows, #Predicate", rill: typedFifty, baseline: fiftyScan,
                unit: "queries/s", higherIsBetter: true, target: "≥ 10,000 q/s", ratio: typedFifty / fiftyScan),
            .init(
                name: "range + sort + limit \(rangeRows) by index order, text", rill: rangeIndexed, baseline: rangeScan,
                unit: "queries/s", higherIsBetter: true, target: "≥ 100× scan", ratio: rangeIndexed / rangeScan),
            .init(
                name: "range + sort + limit \(rangeRows) by index order, #Predicate", rill: typedRange,
                baseline: rangeScan,
                unit: "queries/s", higherIsBetter: true, target: "≥ 100× scan", ratio: typedRange / rangeScan),
        ]
        print(table.render())
        print("text queries are parsed for every run; #Predicate fetches are translated and planned for every run.")
        print(
            String(
                format: "full-scan predicate, text (%@): %.0f records/s, %d matches (target ≥ 1,000,000 records/s)",
                scan, scanRate, scanRows))
        print(
            String(
                format: "full-scan predicate, #Predicate { $0.name.contains(\"99999\") }: %.0f records/s, %d matches",
                typedScanRate, typedScanRows))
    }
}
