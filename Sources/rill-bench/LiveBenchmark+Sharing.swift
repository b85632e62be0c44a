import Dispatch
import Foundation
import Rill
import RillLocks

extension LiveBenchmark {
    /// Subscribers of the same queries, as `rill serve` has them (`RecordLiveQuery`): the time
    /// from `save()` to the last subscriber told of its change, with one subscriber of a query
    /// beside a thousand of it, and ten queries beside a thousand subscribers of them; each
    /// thousand also with a result of its own each (`sharing: false`, as before results were
    /// shared), in the same run.
    ///
    /// Saves are unsynced, on tmpfs where there is one, so that the time is the live queries'
    /// work rather than the disk's. Each save moves one item of a query's range within it, so
    /// that it changes that query's results (and only that query's).
    func sharing(directory: URL) throws {
        var configuration = ModelConfiguration(url: directory)
        configuration.durability = .unsynced
        configuration.initialMapSize = 1 << 30
        let container = try ModelContainer(for: Piece.self, configurations: configuration)
        let context = ModelContext(container)
        for id in 0..<records { context.insert(Piece(id: id, score: id, group: id % 1_000, name: "item \(id)")) }
        try context.save()
        let store = container.store
        let width = 100
        let ranges = (0..<10).map { index in (low: 20_000 + index * 5_000, high: 20_000 + index * 5_000 + width) }
        let texts = ranges.map { "Piece where score >= \($0.low) and score < \($0.high) sort by score" }
        var random = Self.workload(label: "shared subscribers")
        let saves = 300

        /// p50 save → last subscriber told, and the time to start the subscribers: text queries
        /// (`RecordLiveQuery`), or typed live queries (`LiveQuery<Piece>`, observed on one queue).
        func round(
            queries: Int, subscribers: Int, sharing: Bool, typed: Bool = false
        ) throws -> (p50: Double, load: Double) {
            let perQuery = subscribers / queries
            let last = Lock<(sequence: UInt64, told: Int, time: Double)>((0, 0, 0))
            // The clock is read once a commit, when its last subscriber is told: read for every
            // subscriber (23 ns here), it would count the benchmark's own work a thousand times.
            @Sendable func told(_ sequence: UInt64) {
                last.withLock { state in
                    if state.sequence == sequence {
                        state.told += 1
                    } else {
                        state = (sequence, 1, 0)
                    }
                    if state.told == perQuery { state.time = now() }
                }
            }
            var live: [RecordLiveQuery] = []
            var typedLive: [LiveQuery<Piece>] = []
            var observations: [LiveObservation] = []
            let observers = DispatchQueue(label: "rill-bench.live.sharing")
            defer { observations.removeAll() }
            let load = try measure {
                for index in 0..<subscribers {
                    if typed {
                        let range = ranges[index % queries]
                        let (low, high) = (range.low, range.high)
                        let descriptor = FetchDescriptor<Piece>(
                            predicate: #Predicate { $0.score >= low && $0.score < high },
                            sortBy: [SortDescriptor(\.score)])
                        let query = try LiveQuery(descriptor, in: container, sharing: sharing)
                        observations.append(query.observe(on: observers) { told($0.sequence) })
                        typedLive.append(query)
                        continue
                    }
                    let query = try QueryParser.parse(texts[index % queries])
                    live.append(
                        try RecordLiveQuery(query, store: store, sharing: sharing) { event in
                            guard case .change(let change) = event else { return }
                            told(change.sequence)
                        })
                }
            }
            func catchUp() throws {
                if typed {
                    try typedLive[0].catchUp()
                    observers.sync {}
                } else {
                    try live[0].catchUp()
                }
            }
            var latencies: [Double] = []
            for _ in 0..<saves {
                let range = ranges[Int.random(in: 0..<queries, using: &random)]
                let id = Int.random(in: range.low..<range.high, using: &random)
                // Scores stay unique within the range: two items swap theirs.
                let other = Int.random(in: range.low..<range.high, using: &random)
                guard other != id,
                    let first = try context.model(Piece.self, id: id),
                    let second = try context.model(Piece.self, id: other)
                else { continue }
                context.insert(Piece(id: id, score: second.score, group: first.group, name: first.name))
                context.insert(Piece(id: other, score: first.score, group: second.group, name: second.name))
                let called = now()
                guard let sequence = try context.save() else { continue }
                try catchUp()
                let (told, time) = last.withLock { state in
                    state.sequence == sequence ? (state.told, state.time) : (0, called)
                }
                precondition(told == perQuery, "\(told) of \(perQuery) subscribers told of commit \(sequence)")
                latencies.append(max(0, time - called))
            }
            latencies.sort()
            return (percentile(latencies, 0.5), load)
        }

        if onlyTypedSharing {
            let typedOne = try round(queries: 1, subscribers: 1, sharing: true, typed: true)
            let typedThousand = try round(queries: 1, subscribers: queryCount, sharing: true, typed: true)
            print(
                String(
                    format: "p50, %d typed LiveQuery of 1 descriptor vs 1: %.2f ms vs %.2f ms, %.2f×", queryCount,
                    typedThousand.p50 * 1000, typedOne.p50 * 1000, typedThousand.p50 / typedOne.p50))
            return
        }
        let one = try round(queries: 1, subscribers: 1, sharing: true)
        let thousand = try round(queries: 1, subscribers: queryCount, sharing: true)
        let thousandAlone = try round(queries: 1, subscribers: queryCount, sharing: false)
        let ten = try round(queries: 10, subscribers: 10, sharing: true)
        let spread = try round(queries: 10, subscribers: queryCount, sharing: true)
        let spreadAlone = try round(queries: 10, subscribers: queryCount, sharing: false)
        let typedOne = try round(queries: 1, subscribers: 1, sharing: true, typed: true)
        let typedThousand = try round(queries: 1, subscribers: queryCount, sharing: true, typed: true)
        let typedAlone = try round(queries: 1, subscribers: queryCount, sharing: false, typed: true)

        var table = ComparisonTable(
            title:
                "subscribers of the same queries (RecordLiveQuery, as rill serve follows them): save → last "
                + "subscriber told, \(saves) saves each changing one query's results",
            baselineName: "fewer subscribers")
        table.rows = [
            .init(
                name: "p50, \(queryCount) subscribers of 1 query vs 1", rill: thousand.p50 * 1000,
                baseline: one.p50 * 1000, unit: "ms", higherIsBetter: false, target: "≤ 2×",
                ratio: thousand.p50 / one.p50),
            .init(
                name: "p50, \(queryCount) subscribers of 10 queries vs 10", rill: spread.p50 * 1000,
                baseline: ten.p50 * 1000, unit: "ms", higherIsBetter: false, target: "≤ 2×",
                ratio: spread.p50 / ten.p50),
            .init(
                name: "p50, \(queryCount) of 1 query, each a result of its own, vs 1", rill: thousandAlone.p50 * 1000,
                baseline: one.p50 * 1000, unit: "ms", higherIsBetter: false, target: "unshared, for reference",
                ratio: thousandAlone.p50 / one.p50),
            .init(
                name: "p50, \(queryCount) of 10 queries, each a result of its own, vs 10",
                rill: spreadAlone.p50 * 1000, baseline: ten.p50 * 1000, unit: "ms", higherIsBetter: false,
                target: "unshared, for reference", ratio: spreadAlone.p50 / ten.p50),
            .init(
                name: "p50, \(queryCount) typed LiveQuery of 1 descriptor vs 1", rill: typedThousand.p50 * 1000,
                baseline: typedOne.p50 * 1000, unit: "ms", higherIsBetter: false, target: "≤ 2×",
                ratio: typedThousand.p50 / typedOne.p50),
            .init(
                name: "p50, \(queryCount) typed LiveQuery of 1 descriptor, each its own, vs 1",
                rill: typedAlone.p50 * 1000, baseline: typedOne.p50 * 1000, unit: "ms", higherIsBetter: false,
                target: "unshared, for reference", ratio: typedAlone.p50 / typedOne.p50),
            .init(
                name: "start \(queryCount) subscribers of 10 queries, shared vs each its own", rill: spread.load * 1000,
                baseline: spreadAlone.load * 1000, unit: "ms", higherIsBetter: false, target: "reported",
                ratio: spread.load / spreadAlone.load),
        ]
        table.note =
            "ratio: rill ÷ the baseline column; each query: 100 of \(records) records by score; "
            + "each save swaps two items' scores within one query's range (unsynced, tmpfs)"
        print(table.render())
    }
}
