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
    var singleSaves = 300
    var bulkRecords = 100_000
    var rounds = 5

    func run() throws {
        let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("rill-bench-\(UUID())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        print("rill-bench save: \(rounds) rounds, Rill and raw LMDB alternating; medians reported\n")

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
            let (rillSeconds, captured) = try timeRill(
                directory: single, saves: (0..<singleSaves).map { [Item.random($0)] })
            singleRill.append(Double(singleSaves) / rillSeconds)
            singleRaw.append(
                Double(singleSaves) / timeRaw(directory: single.appendingPathExtension("raw"), commits: captured))

            // One save of many records.
            let bulk = scratch.appendingPathComponent("bulk-\(round)")
            let items = (0..<bulkRecords).map(Item.random)
            let residentBefore = Memory.resident()
            Memory.resetPeak()
            let (bulkSeconds, bulkCaptured) = try timeRill(directory: bulk, saves: [items])
            peakRill.append(Double(Memory.peak() - residentBefore) / 1_048_576)
            bulkRill.append(Double(bulkRecords) / bulkSeconds)
            recordSize = bulkCaptured[0].filter { $0.database != "log" }.map(\.value.count).reduce(0, +) / bulkRecords
            let rawBefore = Memory.resident()
            Memory.resetPeak()
            bulkRaw.append(
                Double(bulkRecords) / timeRaw(directory: bulk.appendingPathExtension("raw"), commits: bulkCaptured))
            peakRaw.append(Double(Memory.peak() - rawBefore) / 1_048_576)
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
        // Capture exactly what Rill wrote, to replay through raw LMDB.
        let store = container.store
        var commits: [[CapturedWrite]] = []
        let entries = try store.entries(after: 0)
        try store.read { txn in
            for entry in entries {
                var writes: [CapturedWrite] = []
                for change in entry.changes {
                    writes.append(
                        CapturedWrite(
                            database: "records:" + change.entity, key: change.key, value: change.record ?? [],
                            flags: UInt32(MDB_NOOVERWRITE)))
                }
                let key = LogEntry.key(for: entry.sequence)
                let value = Array(try txn.get(key, in: store.log)!)
                writes.append(CapturedWrite(database: "log", key: key, value: value, flags: UInt32(MDB_APPEND)))
                commits.append(writes)
            }
        }
        return (seconds, commits)
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
