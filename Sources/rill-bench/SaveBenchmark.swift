import CLMDB
import Foundation
import Rill

private func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

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

/// `rill-bench save`: Rill's saves against raw LMDB doing the same puts, in the same run.
struct SaveBenchmark {
    var singleSaves = 1_000
    /// Single saves alternate between Rill and raw LMDB in blocks of this many, so that both
    /// meet the same disk: an fsync's cost drifts over seconds.
    var singleBlock = 50
    var bulkRecords = 100_000
    var rounds = 5

    func run() throws {
        let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("rill-bench-\(UUID())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        print(
            "rill-bench save: \(rounds) rounds; in each, Rill and raw LMDB alternate in blocks of \(singleBlock) single saves, then one bulk save each; medians reported\n"
        )

        var singleRill: [Double] = []
        var singleRaw: [Double] = []
        var bulkRill: [Double] = []
        var bulkRaw: [Double] = []
        var peakRill: [Double] = []
        var peakRaw: [Double] = []
        var recordSize = 0
        for round in 0..<rounds {
            // Durable single-record saves.
            let single = scratch.appendingPathComponent("single-\(round)")
            let (rillSeconds, rawSeconds) = try timeSingleSaves(directory: single)
            singleRill.append(Double(singleSaves) / rillSeconds)
            singleRaw.append(Double(singleSaves) / rawSeconds)

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
            print(
                String(
                    format: "round %d: single %.0f vs %.0f saves/s; bulk %.0f vs %.0f records/s; peak %.1f vs %.1f MiB",
                    round + 1, singleRill.last!, singleRaw.last!, bulkRill.last!, bulkRaw.last!, peakRill.last!,
                    peakRaw.last!))
        }

        var table = ComparisonTable(
            title: "\nsave (records of \(recordSize) bytes, durable: fsync at every commit)", baselineName: "raw LMDB")
        table.rows = [
            .init(
                name: "durable saves of 1 record", rill: median(singleRill), baseline: median(singleRaw),
                unit: "saves/s", higherIsBetter: true, target: "≥ 0.80×",
                ratio: median(zip(singleRill, singleRaw).map { $0 / $1 })),
            .init(
                name: "one save of \(bulkRecords) records", rill: median(bulkRill), baseline: median(bulkRaw),
                unit: "records/s", higherIsBetter: true, target: "≥ 0.50×",
                ratio: median(zip(bulkRill, bulkRaw).map { $0 / $1 })),
            .init(
                name: "peak memory of that save", rill: median(peakRill), baseline: median(peakRaw), unit: "MiB",
                higherIsBetter: false, target: "reported", ratio: nil),
        ]
        print(table.render())
    }

    /// Durable single-record saves through Rill and the same puts through raw LMDB, alternating in
    /// blocks; returns the seconds each took in all.
    private func timeSingleSaves(directory: URL) throws -> (rill: Double, raw: Double) {
        let container = try ModelContainer(for: Item.self, configurations: ModelConfiguration(url: directory))
        let context = container.mainContext
        let raw = RawLMDB(directory: directory.appendingPathExtension("raw").path, mapSize: 64 << 20)
        raw.open(["meta", "log", "records:Item"])
        var (rillSeconds, rawSeconds) = (0.0, 0.0)
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
            saved += count
        }
        return (rillSeconds, rawSeconds)
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
