import CLMDB
import Foundation
import Rill

/// The model of the save benchmark: about 100 bytes encoded.
struct Item: PersistentModel {
    var id: UUID
    var name: String
    var category: String
    var quantity: Int
    var price: Double
    var inStock: Bool

    static func random(_ index: Int) -> Item {
        Item(
            id: UUID(), name: "item \(index) \(String(repeating: "n", count: index % 17))",
            category: ["tools", "books", "garden", "kitchen"][index % 4],
            quantity: index % 1000, price: Double(index % 10_000) / 100, inStock: index % 3 != 0)
    }
}

/// `rill-bench save`: Rill's saves against raw LMDB doing the same puts (the limit) and SQLite
/// saving the same records (the peer), in the same run.
struct SaveBenchmark {
    var singleSaves = 1_000
    /// Single saves alternate between Rill and raw LMDB in blocks of this many, so that both
    /// meet the same disk: an fsync's cost drifts over seconds.
    var singleBlock = 50
    var bulkRecords = 100_000
    var rounds = 5
    /// The writer threads of the concurrent measure (and 1, its reference).
    var concurrentWriters = 16
    /// Which parts run: `saves` (single and bulk saves), `writers` (concurrent writers).
    var parts: Set<String> = ["saves", "writers"]

    func run() throws {
        let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("rill-bench-\(UUID())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        if parts.contains("saves") { try runSaves(scratch: scratch) }
        if parts.contains("writers") { try runWriters(scratch: scratch) }
    }

    /// Durable single saves and one bulk save, beside raw LMDB and SQLite.
    private func runSaves(scratch: URL) throws {
        print(
            "rill-bench save: \(rounds) rounds; in each, Rill, raw LMDB and SQLite alternate in blocks of \(singleBlock) single saves, then one bulk save each; medians reported\n"
        )

        var singleRill: [Double] = []
        var singleRaw: [Double] = []
        var singleSQLite: [Double] = []
        var bulkSQLite: [Double] = []
        var bulkRill: [Double] = []
        var bulkRaw: [Double] = []
        var peakRill: [Double] = []
        var peakRaw: [Double] = []
        var recordSize = 0
        for round in 0..<rounds {
            // Durable single-record saves.
            let single = scratch.appendingPathComponent("single-\(round)")
            let (rillSeconds, rawSeconds, sqliteSeconds) = try timeSingleSaves(directory: single)
            singleRill.append(Double(singleSaves) / rillSeconds)
            singleRaw.append(Double(singleSaves) / rawSeconds)
            singleSQLite.append(Double(singleSaves) / sqliteSeconds)

            // One save of many records. Which of the two goes first alternates by round: the
            // second meets the memory the first freed. The puts to replay come from an untimed
            // save of the same models.
            let bulk = scratch.appendingPathComponent("bulk-\(round)")
            let items = (0..<bulkRecords).map(Item.random)
            let (_, bulkCaptured) = try timeRill(directory: bulk.appendingPathExtension("capture"), saves: [items])
            recordSize = bulkCaptured[0].filter { $0.database != "log" }.map(\.value.count).reduce(0, +) / bulkRecords
            for rillTurn in round.isMultiple(of: 2) ? [true, false] : [false, true] {
                // Let whatever the previous measurement left running (a save frees its staged
                // models on a background queue after it returns) finish before timing the next.
                usleep(300_000)
                let residentBefore = Memory.resident()
                Memory.resetPeak()
                if rillTurn {
                    let (bulkSeconds, _) = try timeRill(directory: bulk, saves: [items])
                    peakRill.append(Double(Memory.peak() - residentBefore) / 1_048_576)
                    bulkRill.append(Double(bulkRecords) / bulkSeconds)
                } else {
                    let seconds = timeRaw(directory: bulk.appendingPathExtension("raw"), commits: bulkCaptured)
                    peakRaw.append(Double(Memory.peak() - residentBefore) / 1_048_576)
                    bulkRaw.append(Double(bulkRecords) / seconds)
                }
            }
            usleep(300_000)
            bulkSQLite.append(Double(bulkRecords) / timeSQLite(path: bulk.appendingPathExtension("sqlite").path, items))
            print(
                String(
                    format:
                        "round %d: single %.0f vs raw %.0f vs SQLite %.0f saves/s; bulk %.0f vs raw %.0f vs SQLite %.0f "
                        + "records/s; peak %.1f vs raw %.1f MiB",
                    round + 1, singleRill.last!, singleRaw.last!, singleSQLite.last!, bulkRill.last!, bulkRaw.last!,
                    bulkSQLite.last!, peakRill.last!, peakRaw.last!))
        }

        var table = ComparisonTable(
            title: "\nsave (records of \(recordSize) bytes, durable: fsync at every commit)", baselineName: "raw LMDB")
        table.rows = [
            .init(
                name: "durable saves of 1 record", rill: PairedSamples.median(singleRill),
                baseline: PairedSamples.median(singleRaw),
                unit: "saves/s", higherIsBetter: true, target: "≥ 0.80×",
                ratio: PairedSamples.median(zip(singleRill, singleRaw).map { $0 / $1 })),
            .init(
                name: "one save of \(bulkRecords) records", rill: PairedSamples.median(bulkRill),
                baseline: PairedSamples.median(bulkRaw),
                unit: "records/s", higherIsBetter: true, target: "≥ 0.50×",
                ratio: PairedSamples.median(zip(bulkRill, bulkRaw).map { $0 / $1 })),
            .init(
                name: "peak memory of that save", rill: PairedSamples.median(peakRill),
                baseline: PairedSamples.median(peakRaw), unit: "MiB",
                higherIsBetter: false, target: "reported", ratio: nil),
        ]
        print(table.render())

        var peer = ComparisonTable(
            title: "\nsave beside SQLite (WAL, prepared statements, the same records; durable: synchronous=FULL)",
            baselineName: "SQLite")
        peer.note =
            "ratio: rill ÷ SQLite, the median of the rounds' ratios; a lone writer's durable saves are bound by raw "
            + "LMDB (two flushes a commit, where SQLite's WAL needs one): its target is the raw LMDB row above"
        peer.rows = [
            .init(
                name: "durable saves of 1 record, 1 writer", rill: PairedSamples.median(singleRill),
                baseline: PairedSamples.median(singleSQLite),
                unit: "saves/s", higherIsBetter: true, target: "≥ 0.80× raw LMDB",
                ratio: PairedSamples.median(zip(singleRill, singleSQLite).map { $0 / $1 })),
            .init(
                name: "one save of \(bulkRecords) records", rill: PairedSamples.median(bulkRill),
                baseline: PairedSamples.median(bulkSQLite),
                unit: "records/s", higherIsBetter: true, target: "≥ 1×",
                ratio: PairedSamples.median(zip(bulkRill, bulkSQLite).map { $0 / $1 })),
        ]
        print(peer.render())
    }

    /// The same records saved into SQLite in one transaction (WAL, `synchronous=FULL`); the seconds taken.
    private func timeSQLite(path: String, _ items: [Item]) -> Double {
        let database = SQLitePeer(path: path, synchronous: .full)
        database.execute(SQLitePeer.itemTable)
        let insert = database.prepare(SQLitePeer.insertItem)
        return measure {
            database.transaction {
                for item in items {
                    insert.bind(item)
                    insert.run()
                }
            }
        }
    }

    /// Durable single-record saves through Rill, the same puts through raw LMDB, and the same
    /// records through SQLite, alternating in blocks; returns the seconds each took in all.
    private func timeSingleSaves(directory: URL) throws -> (rill: Double, raw: Double, sqlite: Double) {
        let container = try ModelContainer(for: Item.self, configurations: ModelConfiguration(url: directory))
        let context = container.mainContext
        let raw = RawLMDB(directory: directory.appendingPathExtension("raw").path, mapSize: 64 << 20)
        raw.open(["meta", "log", "records:Item"])
        let sqlite = SQLitePeer(path: directory.appendingPathExtension("sqlite").path, synchronous: .full)
        sqlite.execute(SQLitePeer.itemTable)
        let insert = sqlite.prepare(SQLitePeer.insertItem)
        var (rillSeconds, rawSeconds, sqliteSeconds) = (0.0, 0.0, 0.0)
        var saved = 0
        while saved < singleSaves {
            let count = min(singleBlock, singleSaves - saved)
            let items = (saved..<saved + count).map(Item.random)
            rillSeconds += try measure {
                for item in items {
                    context.insert(item)
                    try context.save()
                }
            }
            let commits = try captureWrites(of: container.store, after: UInt64(saved))
            rawSeconds += measure {
                for writes in commits { raw.commit(writes) }
            }
            // Each insert its own transaction: a durable save of one record.
            sqliteSeconds += measure {
                for item in items {
                    insert.bind(item)
                    insert.run()
                }
            }
            saved += count
        }
        return (rillSeconds, rawSeconds, sqliteSeconds)
    }

    /// Runs the saves through Rill; returns the seconds taken and the puts Rill made, read back from the store.
    private func timeRill(directory: URL, saves: [[Item]]) throws -> (Double, [[CapturedWrite]]) {
        let container = try ModelContainer(for: Item.self, configurations: ModelConfiguration(url: directory))
        let context = container.mainContext
        let seconds = try measure {
            for save in saves {
                for item in save { context.insert(item) }
                try context.save()
            }
        }
        return (seconds, try captureWrites(of: container.store, after: 0))
    }

    /// Exactly what Rill wrote in the commits after `sequence`, to replay through raw LMDB.
    private func captureWrites(of store: Store, after sequence: UInt64) throws -> [[CapturedWrite]] {
        var commits: [[CapturedWrite]] = []
        let entries = try store.entries(after: sequence)
        for entry in entries {
            var writes: [CapturedWrite] = []
            for change in entry.changes {
                writes.append(
                    CapturedWrite(
                        database: "records:" + change.entity, key: change.key, value: change.record ?? [],
                        flags: UInt32(MDB_NOOVERWRITE)))
            }
            // The bytes the log holds: an entry encodes as it was stored.
            let key = LogEntry.key(for: entry.sequence)
            writes.append(CapturedWrite(database: "log", key: key, value: entry.encoded, flags: UInt32(MDB_APPEND)))
            commits.append(writes)
        }
        return commits
    }

    /// Replays the same puts through the C API, one transaction per save; returns the seconds taken.
    private func timeRaw(directory: URL, commits: [[CapturedWrite]]) -> Double {
        let raw = RawLMDB(directory: directory.path, mapSize: 64 << 20)
        raw.open(["meta", "log", "records:Item"])
        return measure {
            for writes in commits { raw.commit(writes) }
        }
    }
}
