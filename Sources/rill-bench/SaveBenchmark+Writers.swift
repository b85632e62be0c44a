import Foundation

extension SaveBenchmark {
    /// Durable single-record saves from 1 and `concurrentWriters` threads, Rill and SQLite taking
    /// turns in each round.
    ///
    /// SQLite is measured two ways with many threads, and Rill compared with the faster: a
    /// connection per thread, which contend for the database's write lock (SQLite's busy
    /// handler sleeps between tries), and one connection the threads take turns on, which is how
    /// GRDB's `DatabaseQueue` and `DatabasePool` write.
    func runWriters(scratch: URL) throws {
        print("\nrill-bench save writers: \(rounds) rounds of 1 and \(concurrentWriters) writer threads\n")
        let concurrent = ConcurrentSaves()
        var rillOne: [Double] = []
        var rillMany: [Double] = []
        var sqliteOne: [Double] = []
        var sqliteMany: [Double] = []
        var sqliteShared: [Double] = []
        for round in 0..<rounds {
            let directory = scratch.appendingPathComponent("concurrent-\(round)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            rillOne.append(try concurrent.rill(writers: 1, directory: directory.appendingPathComponent("rill-1")))
            sqliteOne.append(concurrent.sqlite(writers: 1, path: directory.appendingPathComponent("one.sqlite").path))
            rillMany.append(
                try concurrent.rill(
                    writers: concurrentWriters, directory: directory.appendingPathComponent("rill-\(concurrentWriters)")
                ))
            sqliteMany.append(
                concurrent.sqlite(
                    writers: concurrentWriters, path: directory.appendingPathComponent("many.sqlite").path))
            sqliteShared.append(
                concurrent.sqliteSharingOneConnection(
                    writers: concurrentWriters, path: directory.appendingPathComponent("shared.sqlite").path))
            print(
                String(
                    format:
                        "round %d: 1 writer %.0f vs SQLite %.0f saves/s; %d writers %.0f vs SQLite %.0f "
                        + "(a connection each) and %.0f (one connection) saves/s",
                    round + 1, rillOne.last!, sqliteOne.last!, concurrentWriters, rillMany.last!, sqliteMany.last!,
                    sqliteShared.last!))
        }
        let sqliteBest = zip(sqliteMany, sqliteShared).map { max($0, $1) }
        var peer = ComparisonTable(
            title: "\nwriters beside SQLite (WAL, synchronous=FULL, one record per transaction)", baselineName: "SQLite"
        )
        peer.note =
            "ratio: rill ÷ SQLite, the median of the rounds' ratios; with many threads SQLite's figure is the faster of a "
            + "connection per thread and one connection shared in turns (GRDB's way)"
        peer.rows = [
            .init(
                name: "durable saves, 1 writer thread", rill: PairedSamples.median(rillOne),
                baseline: PairedSamples.median(sqliteOne),
                unit: "saves/s", higherIsBetter: true, target: "reference",
                ratio: PairedSamples.median(zip(rillOne, sqliteOne).map { $0 / $1 })),
            .init(
                name: "durable saves, \(concurrentWriters) writer threads", rill: PairedSamples.median(rillMany),
                baseline: PairedSamples.median(sqliteBest), unit: "saves/s", higherIsBetter: true, target: "≥ 1×",
                ratio: PairedSamples.median(zip(rillMany, sqliteBest).map { $0 / $1 })),
        ]
        print(peer.render())
        print(
            String(
                format:
                    "%d writers ÷ 1 writer: Rill %.2f× (target ≥ 6×); SQLite %.2f× with a connection each, %.2f× "
                    + "with one connection",
                concurrentWriters, PairedSamples.median(zip(rillMany, rillOne).map { $0 / $1 }),
                PairedSamples.median(zip(sqliteMany, sqliteOne).map { $0 / $1 }),
                PairedSamples.median(zip(sqliteShared, sqliteOne).map { $0 / $1 })
            )
        )
    }
}
