import Dispatch
import Foundation
import Rill
import RillWorkloads

/// The model of the live-query benchmark.
struct Piece: PersistentModel {
    var id: Int
    /// A permutation of the identifiers: a range of `size` scores holds `size` items.
    var score: Int
    var group: Int
    var name: String

    static let indexes: [ModelIndex<Piece>] = [ModelIndex(\.score), ModelIndex(\.group)]
}

/// `rill-bench live`: live queries maintained from the log beside re-running them after each save.
struct LiveBenchmark {
    var records = 100_000
    var queryCount = 1_000
    var saveCount = 1_000
    /// Saves whose affected queries are also re-fetched (the baseline), to bound the run time.
    var refetchSamples = 15
    /// Runs only the main measure (many live queries), without the smaller ones before it.
    var onlyMany = false
    /// Only the rows of typed live queries that share a result (to profile them).
    var onlyTypedSharing = false

    /// Each delivered change's arrival time, recorded on one serial queue.
    final class Arrivals: @unchecked Sendable {
        // Guarded by `queue`.
        var latest: [UInt64: Double] = [:]
        var queries: [UInt64: [Int]] = [:]
        let queue = DispatchQueue(label: "rill-bench.live.deliveries")
    }

    func run() throws {
        let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("rill-bench-\(UUID())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        print(
            "rill-bench live: \(records) records, \(queryCount) live queries, \(saveCount) single-record saves; "
                + "re-fetch baseline in the same run\n")
        // The smaller measures first, each in a store of its own, so that tearing down the
        // thousand queries of the main one cannot disturb them.
        // The measures of a live query's own work save unsynced, and an observer of unsynced saves
        // flushes the file before it is told of them: on tmpfs, where a flush costs nothing, the
        // time from save() to the observer stays the live query's work rather than the disk's.
        let flushFree =
            FileManager.default.fileExists(atPath: "/dev/shm")
            ? URL(fileURLWithPath: "/dev/shm").appendingPathComponent("rill-bench-\(UUID())") : scratch
        defer { try? FileManager.default.removeItem(at: flushFree) }
        if onlyTypedSharing {
            try sharing(directory: flushFree.appendingPathComponent("sharing"))
            return
        }
        if onlyMany {
            try manyQueries(directory: scratch.appendingPathComponent("many"))
            return
        }
        try crossProcess(directory: scratch.appendingPathComponent("cross"))
        try compareResultSizes(directory: flushFree.appendingPathComponent("sizes"))
        guard queryCount > 0 else { return }
        try relationships(directory: flushFree.appendingPathComponent("related"))
        try sharing(directory: flushFree.appendingPathComponent("sharing"))
        try manyQueries(directory: scratch.appendingPathComponent("many"))
    }

    /// The main measure: many live queries, single-record saves, beside re-fetching.
    private func manyQueries(directory scratch: URL) throws {
        var configuration = ModelConfiguration(url: scratch)
        configuration.initialMapSize = 1 << 30
        let container = try ModelContainer(for: Piece.self, configurations: configuration)
        let context = container.mainContext
        var random = Self.workload(label: "live queries and saves")
        var scores = Array(0..<records)
        scores.shuffle(using: &random)
        let pieces = (0..<records).map { Piece(id: $0, score: scores[$0], group: $0 % 1_000, name: "item \($0)") }
        for piece in pieces { context.insert(piece) }
        try context.save()
        let sqlite = SQLiteRequery(path: scratch.appendingPathExtension("sqlite").path, pieces: pieces)

        // Queries: a score range of 10 to 50,000 items (log-uniform sizes), in one of four orders,
        // a fifth of them with a window of 50 rows.
        var descriptors: [FetchDescriptor<Piece>] = []
        var shapes: [SQLiteRequery.Shape] = []
        var sizes: [Int] = []
        for index in 0..<queryCount {
            let size = Int(exp(Double.random(in: log(10)...log(50_000), using: &random)))
            let low = Int.random(in: 0...(records - size), using: &random)
            let high = low + size
            let sort: [SortDescriptor<Piece>] =
                switch index % 4 {
                case 0: [SortDescriptor(\.score)]
                case 1: [SortDescriptor(\.score, order: .reverse)]
                case 2: [SortDescriptor(\.group), SortDescriptor(\.score)]
                default: []
                }
            var descriptor = FetchDescriptor<Piece>(
                predicate: #Predicate { $0.score >= low && $0.score < high }, sortBy: sort)
            if index % 5 == 0 { descriptor.fetchLimit = 50 }
            shapes.append(.init(low: low, high: high, order: index % 4, limit: descriptor.fetchLimit))
            descriptors.append(descriptor)
            sizes.append(size)
        }
        let arrivals = Arrivals()
        var queries: [LiveQuery<Piece>] = []
        var observations: [LiveObservation] = []
        // What one copy of every record costs held as results: the resident growth of one fetch of
        // them all, kept while it is measured.
        usleep(300_000)
        let beforeCopy = Memory.resident()
        let copyBytes = try withExtendedLifetime(context.fetch(FetchDescriptor<Piece>())) { all -> Int in
            precondition(all.count == records)
            return Memory.resident() - beforeCopy
        }
        usleep(300_000)
        let beforeLoad = Memory.resident()
        let loading = try measure {
            for (index, descriptor) in descriptors.enumerated() {
                let query = try LiveQuery(descriptor, in: container)
                observations.append(
                    query.observe(on: arrivals.queue) { change in
                        arrivals.latest[change.sequence] = now()
                        arrivals.queries[change.sequence, default: []].append(index)
                    })
                queries.append(query)
            }
        }
        let held = queries.reduce(0) { $0 + $1.count }
        let heldBytes = Memory.resident() - beforeLoad
        print(
            String(
                format: "%d live queries loaded in %.1f s (%d rows held in all; resident memory %.0f MiB)",
                queryCount, loading, held, Double(Memory.resident()) / 1_048_576))
        print(
            String(
                format:
                    "held rows: %.0f bytes each (resident growth %.0f MiB over the load); one copy of the %d records "
                    + "as a fetch holds them: %.0f MiB; beyond that copy: %.0f bytes a row (target ≤ 64)\n",
                Double(heldBytes) / Double(held), Double(heldBytes) / 1_048_576, records,
                Double(copyBytes) / 1_048_576, Double(heldBytes - copyBytes) / Double(held)))

        // Single-record saves: one item gets a new score (it leaves some ranges and enters others).
        var latencies: [Double] = []
        var refetches: [Double] = []
        var sqliteAffected: [Double] = []
        var sqliteEvery: [Double] = []
        var affectedCounts: [Int] = []
        for round in 0..<saveCount {
            let id = Int.random(in: 0..<records, using: &random)
            let score = Int.random(in: 0..<records, using: &random)
            context.insert(Piece(id: id, score: score, group: id % 1_000, name: "item \(id)"))
            guard let sequence = try context.save() else { continue }
            let saved = now()
            // Wait for the follower; the arrival times were recorded as the observers ran.
            try queries[0].catchUp()
            let (arrived, affected) = arrivals.queue.sync {
                (arrivals.latest[sequence], arrivals.queries[sequence] ?? [])
            }
            // A change can reach its observers before `save()` has returned: that counts as 0.
            latencies.append(max(0, (arrived ?? saved) - saved))
            affectedCounts.append(affected.count)
            // The peer's copy gets the same change, untimed.
            sqlite.move(id: id, to: score)
            if refetchSamples > 0, round % max(saveCount / refetchSamples, 1) == 0 {
                var rillCounts: [Int] = []
                refetches.append(
                    try measure {
                        for index in affected { rillCounts.append(try context.fetch(queries[index].descriptor).count) }
                    })
                var sqliteCounts: [Int] = []
                sqliteAffected.append(
                    measure {
                        for index in affected { sqliteCounts.append(sqlite.fetch(shapes[index]).count) }
                    })
                precondition(
                    rillCounts == sqliteCounts, "SQLite's rows \(sqliteCounts) differ from Rill's \(rillCounts)")
                // What a table-level observation does: every query on the table runs again.
                sqliteEvery.append(
                    measure {
                        for shape in shapes { _ = sqlite.fetch(shape) }
                    })
            }
        }
        sqliteAffected.sort()
        sqliteEvery.sort()
        latencies.sort()
        refetches.sort()
        let p50 = percentile(latencies, 0.5)
        let p99 = percentile(latencies, 0.99)
        let refetch = percentile(refetches, 0.5)
        let affected = Double(affectedCounts.reduce(0, +)) / Double(max(affectedCounts.count, 1))

        var table = ComparisonTable(
            title:
                "save → every affected observer notified (\(queryCount) queries, \(String(format: "%.0f", affected)) "
                + "affected per save on average)",
            baselineName: "re-fetch affected")
        table.rows.append(
            .init(
                name: "p50 per save", rill: p50 * 1000, baseline: refetch * 1000, unit: "ms", higherIsBetter: false,
                target: "< 1 ms, ≥ 50×", ratio: refetch / p50))
        table.rows.append(
            .init(
                name: "p99 per save", rill: p99 * 1000, baseline: percentile(refetches, 0.99) * 1000, unit: "ms",
                higherIsBetter: false, target: "", ratio: percentile(refetches, 0.99) / p99))
        table.note =
            "ratio: re-fetch ÷ rill; re-fetch: the median over \(refetches.count) of the saves of running every "
            + "query that changed again. Saves are durable: LMDB makes a commit visible once its flushes are "
            + "done, a moment before save() returns, and the follower may start on it then"
        print(table.render())

        var peer = ComparisonTable(
            title: "save → every affected observer notified, beside SQLite re-running queries after the commit",
            baselineName: "SQLite re-query")
        peer.rows = [
            .init(
                name: "p50 per save, SQLite re-runs every query (GRDB's ValueObservation)", rill: p50 * 1000,
                baseline: percentile(sqliteEvery, 0.5) * 1000, unit: "ms", higherIsBetter: false, target: "≥ 1,000×",
                ratio: percentile(sqliteEvery, 0.5) / p50),
            .init(
                name: "p50 per save, SQLite re-runs only the affected queries", rill: p50 * 1000,
                baseline: percentile(sqliteAffected, 0.5) * 1000, unit: "ms", higherIsBetter: false,
                target: "reported", ratio: percentile(sqliteAffected, 0.5) / p50),
        ]
        peer.note =
            "ratio: SQLite ÷ rill; SQLite: the median over \(sqliteEvery.count) of the saves, WAL, a prepared "
            + "statement per order, every row decoded into a Piece; a table-level observation (GRDB's, "
            + "SwiftData's) re-runs every query on the table; knowing which queries a save affects is already "
            + "Rill's work"
        print(peer.render())
        observations.removeAll()
        queries.removeAll()

    }

    /// The generator of a measure's queries and saves: the same workload in every run (seed
    /// 2026), or another with `RILL_SEED`.
    static func workload(label: String) -> SeededGenerator {
        SeededGenerator(
            seed: ProcessInfo.processInfo.environment["RILL_SEED"].flatMap(UInt64.init) ?? 2026, label: label)
    }

    /// One live query over 50,000 results beside one over 100: latency and memory per save.
    ///
    /// In a store of its own with unsynced saves, on tmpfs where there is one, so that the time
    /// from calling `save()` to the observer is the live query's work rather than the disk's.
    private func compareResultSizes(directory: URL) throws {
        var configuration = ModelConfiguration(url: directory)
        configuration.durability = .unsynced
        let container = try ModelContainer(for: Piece.self, configurations: configuration)
        let context = ModelContext(container)
        for id in 0..<records { context.insert(Piece(id: id, score: id, group: id % 1_000, name: "item \(id)")) }
        try context.save()
        var rows: [(size: Int, p50: Double, bytes: Double)] = []
        for size in [100, 50_000] {
            let low = 20_000
            let high = low + size
            let query = try LiveQuery(
                FetchDescriptor<Piece>(
                    predicate: #Predicate { $0.score >= low && $0.score < high }, sortBy: [SortDescriptor(\.score)]),
                in: container)
            let arrivals = Arrivals()
            let observation = query.observe(on: arrivals.queue) { change in arrivals.latest[change.sequence] = now() }
            // Each save moves an item inside the range, so every save changes the results.
            var latencies: [Double] = []
            var kept: [LiveResults<Piece>] = []
            var random = Self.workload(label: "")
            let before = Memory.resident()
            for _ in 0..<1_000 {
                let item = query[Int.random(in: 0..<query.count, using: &random)]
                context.insert(
                    Piece(
                        id: item.id, score: Int.random(in: low..<high, using: &random), group: item.group,
                        name: item.name))
                let called = now()
                guard let sequence = try context.save() else { continue }
                try query.catchUp()
                let arrived = arrivals.queue.sync { arrivals.latest[sequence] }
                latencies.append((arrived ?? called) - called)
                // Every version is kept, so what each one newly allocated stays resident.
                kept.append(query.results)
            }
            let bytes = Double(Memory.resident() - before) / Double(kept.count)
            latencies.sort()
            rows.append((size, percentile(latencies, 0.5), bytes))
            observation.cancel()
        }
        var table = ComparisonTable(
            title: "one live query, 1,000 saves that each change its results", baselineName: "100 results")
        table.rows.append(
            .init(
                name: "p50 save() called → notified, 50,000 results", rill: rows[1].p50 * 1000,
                baseline: rows[0].p50 * 1000,
                unit: "ms", higherIsBetter: false, target: "≤ 2×", ratio: rows[1].p50 / rows[0].p50))
        table.rows.append(
            .init(
                name: "memory per save, 50,000 results", rill: rows[1].bytes / 1024, baseline: rows[0].bytes / 1024,
                unit: "KiB", higherIsBetter: false, target: "≪ a copy of the results", ratio: nil))
        table.note =
            "ratio: 50,000 results ÷ 100 results; memory: resident growth per save with every version of the "
            + "results kept (a version shares all but what the save changed)"
        print(table.render())
    }

    /// Commits in a child process, delivered to a live query here.
    private func crossProcess(directory: URL) throws {
        let container = try ModelContainer(
            for: Piece.self, configurations: ModelConfiguration(url: directory))
        let context = ModelContext(container)
        for id in 0..<records { context.insert(Piece(id: id, score: id, group: id % 1_000, name: "item \(id)")) }
        try context.save()
        let query = try LiveQuery(FetchDescriptor<Piece>(predicate: #Predicate { $0.group == 7 }), in: container)
        let arrivals = Arrivals()
        let observation = query.observe(on: arrivals.queue) { change in
            arrivals.latest[change.sequence] = wallClock()
        }
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["live-writer", directory.path, "500"]
        let output = Pipe()
        child.standardOutput = output
        try child.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        try query.catchUp()
        var latencies: [Double] = []
        let delivered = arrivals.queue.sync { arrivals.latest }
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 2, let sequence = UInt64(fields[0]), let committed = Double(fields[1]),
                let arrived = delivered[sequence]
            else { continue }
            latencies.append(arrived - committed)
        }
        latencies.sort()
        observation.cancel()
        print(
            String(
                format:
                    "another process's commit → change delivered here: p50 %.2f ms, p99 %.2f ms over %d commits "
                    + "(target p99 < 10 ms)",
                percentile(latencies, 0.5) * 1000, percentile(latencies, 0.99) * 1000, latencies.count))
    }

    /// `rill-bench live-writer <store> <count>`: single-record saves 2 ms apart, each printed as
    /// "<sequence> <wall-clock seconds>" once it returned.
    static func writer(directory: String, count: Int) throws {
        let container = try ModelContainer(
            for: Piece.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: directory)))
        let context = ModelContext(container)
        var random = SystemRandomNumberGenerator()
        var lines = ""
        for _ in 0..<count {
            let id = Int.random(in: 0..<100, using: &random) * 1_000 + 7
            context.insert(Piece(id: id, score: Int.random(in: 0..<100_000, using: &random), group: 7, name: "moved"))
            if let sequence = try context.save() { lines += "\(sequence) \(wallClock())\n" }
            usleep(2_000)
        }
        FileHandle.standardOutput.write(Data(lines.utf8))
    }
}

/// Seconds since 1970 (comparable across processes).
func wallClock() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_REALTIME, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// The value at `fraction` of sorted `values` (0 when empty).
func percentile(_ values: [Double], _ fraction: Double) -> Double {
    guard !values.isEmpty else { return 0 }
    return values[min(values.count - 1, Int(Double(values.count - 1) * fraction))]
}
