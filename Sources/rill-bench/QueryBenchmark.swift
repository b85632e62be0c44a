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

/// `Entry` read by a model that reads each field of its record itself (`init(record:)`), as
/// SQLite's side reads each column of a row: the same records, fetched through `#Predicate`.
struct RecordEntry: PersistentModel {
    static let entityName = "Entry"
    var id: Int
    var code: Int
    var category: Int
    var amount: Double
    var createdAt: Date
    var name: String

    static let indexes: [ModelIndex<RecordEntry>] = [
        ModelIndex(\.code), ModelIndex(\.category), ModelIndex(\.amount),
    ]

    init(record: borrowing ModelRecord) throws {
        id = try record.decode(forKey: "id")
        code = try record.decode(forKey: "code")
        category = try record.decode(forKey: "category")
        amount = try record.decode(forKey: "amount")
        createdAt = try record.decode(forKey: "createdAt")
        name = try record.decode(forKey: "name")
    }
}

/// `rill-bench query`: the same records loaded into Rill, into SQLite (the same columns and
/// indexes) and into raw LMDB (Rill's own puts), then the same queries through Rill's text
/// language, through `#Predicate` and through SQLite, over the same stream of arguments, and full
/// scans beside SQLite's and beside a raw LMDB cursor walk; each indexed query also beside itself
/// forced to a full scan. Everything in one run.
struct QueryBenchmark {
    var records = 1_000_000
    /// Rounds of each row; in each, every measure of the row runs once, back to back.
    var rounds = 3
    /// Seconds each query measure runs in a round.
    var seconds = 0.5
    /// How many arguments of each query are drawn: every side runs them in the same order, from
    /// the first, and each argument's row count is compared across the sides.
    var argumentCount = 1 << 17
    /// Which parts run after the loads: `indexed` (the indexed queries), `scans` (the full scans).
    var parts: Set<String> = ["indexed", "scans"]
    /// An operation to repeat after the Rill load instead (see `loops`), and how many times (for
    /// 15 seconds without).
    var loop: String? = nil
    var loopRuns: Int? = nil

    /// Record `index` of `records`, the same for Rill and SQLite.
    static func entry(_ index: Int, of records: Int) -> Entry {
        Entry(
            id: index, code: (index &* 7_919) % records, category: index % 20_000,
            amount: Double((index &* 104_729) % 10_000_000) / 100,
            createdAt: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)), name: "entry \(index)")
    }

    func run() throws {
        let start = now()
        let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("rill-bench-\(UUID())")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        print(
            "rill-bench query: \(records) records in Rill, SQLite and raw LMDB; \(rounds) rounds of every row, "
                + "each round running the row's measures back to back (1 core)\n")

        // Loads: Rill (.unsynced: no flush), SQLite (synchronous=OFF), raw LMDB (MDB_NOSYNC).
        let directory = scratch.appendingPathComponent("rill")
        var configuration = ModelConfiguration(url: directory)
        configuration.durability = .unsynced
        // Start with room for the load, so that the one big save is not replayed as the map grows
        // (raw LMDB is given the same map).
        configuration.initialMapSize = 2 << 30
        let container = try ModelContainer(for: Entry.self, configurations: configuration)
        let context = container.mainContext
        let store = container.store
        let records = self.records
        let rillLoad = try measure {
            for index in 0..<records { context.insert(Self.entry(index, of: records)) }
            try context.save()
        }
        if let loop, !loop.hasPrefix("loop-sqlite") {
            try runLoop(loop, store: store, context: context)
            return
        }
        let table = EntryTable(path: scratch.appendingPathComponent("peer.sqlite").path)
        let sqliteLoad = measure { table.load(records) { Self.entry($0, of: records) } }
        table.checkpoint()
        if let loop {
            runLoop(loop, table: table)
            return
        }
        print(table.settings())
        let (rawLoad, puts, copy) = try loadRaw(from: directory, scratch: scratch, mapSize: 2 << 30)
        print(
            String(
                format: "loaded in %.1f s (Rill), %.1f s (SQLite), %.1f s (raw LMDB: %d puts, %@)\n", rillLoad,
                sqliteLoad, rawLoad, puts.putCount, HistoryBenchmark.mebibytes(puts.byteCount)))

        // One stream of arguments for every side. The generator is in memory: the system's makes
        // a system call for every number, which the query loops would measure along with the queries.
        var random = SeededGenerator(label: "query arguments")
        let codes = (0..<argumentCount).map { _ in Int.random(in: 0..<records, using: &random) }
        let categories = (0..<argumentCount).map { _ in Int.random(in: 0..<20_000, using: &random) }
        let amounts = (0..<argumentCount).map { _ in Double(Int.random(in: 0..<9_000_000, using: &random)) / 100 }
        for sql in [EntryTable.codeQuery, EntryTable.categoryQuery, EntryTable.rangeQuery, EntryTable.descendingQuery] {
            print("SQLite's plan of \(sql): \(table.plan(of: sql))")
        }
        print()

        // Each indexed query: its name in the tables, and its target beside a forced full scan.
        var indexed: [(query: IndexedQuery, name: String, target: String)] = []
        if parts.contains("indexed") {
            let byCode = RawIndexedGets(raw: copy, entity: Entry.entityName, field: "code")
            let byCategory = RawIndexedGets(raw: copy, entity: Entry.entityName, field: "category")
            let byAmount = RawIndexedGets(raw: copy, entity: Entry.entityName, field: "amount")
            let oneRow = try compare(
                "code ==", codes, store: store, context: context, text: { "Entry where code == \($0)" },
                typed: { code in FetchDescriptor(predicate: #Predicate { $0.code == code }) },
                reading: { code in FetchDescriptor(predicate: #Predicate { $0.code == code }) },
                peer: table.entries(code:), raw: byCode, probe: { RawIndexedGets.equal(to: .int(Int64($0))) })
            let fifty = try compare(
                "category ==", categories, store: store, context: context, text: { "Entry where category == \($0)" },
                typed: { category in FetchDescriptor(predicate: #Predicate { $0.category == category }) },
                reading: { category in FetchDescriptor(predicate: #Predicate { $0.category == category }) },
                peer: table.entries(category:), raw: byCategory,
                probe: { RawIndexedGets.equal(to: .int(Int64($0))) })
            let range = try compare(
                "amount > x sort by amount limit 20", amounts, store: store, context: context,
                text: { "Entry where amount > \($0) sort by amount limit 20" },
                typed: { amount in
                    var descriptor = FetchDescriptor(
                        predicate: #Predicate<Entry> { $0.amount > amount }, sortBy: [SortDescriptor(\.amount)])
                    descriptor.fetchLimit = 20
                    return descriptor
                },
                reading: { amount in
                    var descriptor = FetchDescriptor(
                        predicate: #Predicate<RecordEntry> { $0.amount > amount }, sortBy: [SortDescriptor(\.amount)])
                    descriptor.fetchLimit = 20
                    return descriptor
                },
                peer: table.entries(above:), raw: byAmount, probe: { RawIndexedGets.above(.double($0), limit: 20) })
            // "Newest first": the same index read from its end.
            let descending = try compare(
                "amount < x sort by amount desc limit 20", amounts, store: store, context: context,
                text: { "Entry where amount < \($0) sort by amount desc limit 20" },
                typed: { amount in
                    var descriptor = FetchDescriptor(
                        predicate: #Predicate<Entry> { $0.amount < amount },
                        sortBy: [SortDescriptor(\.amount, order: .reverse)])
                    descriptor.fetchLimit = 20
                    return descriptor
                },
                reading: { amount in
                    var descriptor = FetchDescriptor(
                        predicate: #Predicate<RecordEntry> { $0.amount < amount },
                        sortBy: [SortDescriptor(\.amount, order: .reverse)])
                    descriptor.fetchLimit = 20
                    return descriptor
                },
                peer: table.entries(below:), raw: byAmount, probe: { RawIndexedGets.below(.double($0), limit: 20) })
            indexed = [
                (oneRow, "indexed equality, \(oneRow.rows) row", "≥ 100,000 q/s"),
                (fifty, "indexed equality, \(fifty.rows) rows", "≥ 10,000 q/s"),
                (range, "range + sort + limit \(range.rows)", "≥ 100× scan"),
                (descending, "range + sort desc + limit \(descending.rows)", "≥ 100× scan"),
            ]
        }
        let scans =
            parts.contains("scans")
            ? try scan(store: store, context: context, table: table, raw: copy)
            : ScanRows(besideSQLite: [], besideRaw: [], sqliteBesideRaw: "")
        print()

        var peer = ComparisonTable(title: "query beside SQLite (1 core)", baselineName: "SQLite")
        peer.note =
            "ratio: rill ÷ SQLite. Loads: one each, in this order. Queries and scans: median over \(rounds) rounds of "
            + "the ratio within a round. SQLite: prepared statements bound anew for each query, every column of every "
            + "row read into an Entry; the same indexes, created before its load."
        peer.rows = [
            .init(
                name: "load, 3 indexes, one transaction, no flush (Rill .unsynced, SQLite synchronous=OFF)",
                rill: Double(records) / rillLoad, baseline: Double(records) / sqliteLoad, unit: "records/s",
                higherIsBetter: true, target: "≥ 1.00×", ratio: sqliteLoad / rillLoad)
        ]
        for (query, name, _) in indexed {
            for (index, language) in Self.rillSides {
                peer.rows.append(
                    .init(
                        name: "\(name), \(language)", rill: query.rates.median(index), baseline: query.rates.median(2),
                        unit: "queries/s", higherIsBetter: true, target: "≥ 1.00×",
                        ratio: query.rates.ratio(index, to: 2)))
            }
        }
        peer.rows += scans.besideSQLite
        print(peer.render())

        var limit = ComparisonTable(
            title: "query beside raw LMDB, the storage's limit (1 core)", baselineName: "raw LMDB")
        limit.note =
            "ratio: rill (or SQLite) ÷ raw LMDB. Load: one each. Queries and scans: median over \(rounds) rounds of "
            + "the ratio within a round. Raw indexed queries: a cursor on the index from the argument's key, made "
            + "beforehand, and a get of each record it names, in a read transaction each; the raw walk is an LMDB "
            + "cursor over an exact copy of the store's records (each value's size summed)."
        limit.rows = [
            .init(
                name: "load: Rill's \(puts.putCount) puts (records, 3 index keys each, log), one transaction, no flush",
                rill: Double(records) / rillLoad, baseline: Double(records) / rawLoad, unit: "records/s",
                higherIsBetter: true, target: "≥ 0.50×", ratio: rawLoad / rillLoad)
        ]
        for (query, name, _) in indexed {
            for (index, language) in Self.rillSides {
                limit.rows.append(
                    .init(
                        name: "\(name), \(language)", rill: query.rates.median(index),
                        baseline: query.rates.median(4), unit: "queries/s", higherIsBetter: true,
                        target: query.rows == 1 ? "≥ 0.30×" : "reported", ratio: query.rates.ratio(index, to: 4)))
            }
            limit.rows.append(
                .init(
                    name: "\(name), SQLite", rill: query.rates.median(2), baseline: query.rates.median(4),
                    unit: "queries/s", higherIsBetter: true, target: "reported", ratio: query.rates.ratio(2, to: 4)))
        }
        limit.rows += scans.besideRaw
        print(limit.render())
        print(scans.sqliteBesideRaw)
        print()

        var plans = ComparisonTable(
            title: "indexed queries beside themselves forced to a full scan (1 core)", baselineName: "full scan")
        plans.note = "ratio: rill ÷ the same query forced to a full scan (one run of it), measured in this run"
        for (query, name, target) in indexed {
            for (index, language) in Self.rillSides {
                plans.rows.append(
                    .init(
                        name: "\(name), \(language)", rill: query.rates.median(index), baseline: query.forcedScan,
                        unit: "queries/s", higherIsBetter: true, target: target,
                        ratio: query.rates.median(index) / query.forcedScan))
            }
        }
        print(plans.render())
        print(
            "text queries are parsed for every run; #Predicate fetches build a new predicate for every run, bound to "
                + "the translation prepared for its form, and are planned for every run. #Predicate rows decode each "
                + "model through Decodable; init(record:) rows fetch a model that reads its record's fields itself.")
        print(String(format: "rill-bench query: %.0f s in all", now() - start))
    }
}
