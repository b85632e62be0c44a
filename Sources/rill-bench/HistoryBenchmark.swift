import Foundation
import Rill
import RillWorkloads

/// `rill-bench history`: what using the log costs — replaying it (a rebuild), reading the store
/// as it was some commits back (as-of fetches), resuming live queries, backing the store up —
/// each beside a baseline measured in the same run.
///
/// The store is a leaderboard: `records` players loaded in one save, then `commits` single-record
/// saves, each giving a random player the fastest lap yet, so that every commit changes the top
/// of the board (`sort by lapTime limit 50`), the query the as-of and resume measures read.
struct HistoryBenchmark {
    var records = 200_000
    var commits = 100_000
    /// The measures to run; `rill-bench history … as-of resume` runs only those.
    var measures = Measure.allCases

    /// How many commits back the as-of and resume measures reach (those within `commits`).
    static let distances = [1, 100, 10_000, 100_000]

    /// What the benchmark measures.
    enum Measure: String, CaseIterable {
        /// `Store.backup(to:)` against a plain copy of the file, at each point of the build.
        case backup
        /// The replay of a rebuild against raw LMDB walking the same log.
        case replay
        /// As-of fetches against the same fetch now.
        case asOf = "as-of"
        /// Resumed live queries against starting them afresh.
        case resume
        /// Compaction's fold and file rewrite against a plain copy of the file.
        case compact
    }

    /// The points of the build at which the file is backed up: its size differs at each.
    enum BuildPoint: String {
        case loaded = "after the load"
        case committed = "after the commits"
        case rebuilt = "after the rebuilds (free pages)"
    }

    /// The query the as-of and resume measures read: the top of the board, in the order of an
    /// index (a descending sort is not served by one: it would scan every player).
    var topOfBoard: FetchDescriptor<Player> {
        var descriptor = FetchDescriptor<Player>(sortBy: [SortDescriptor(\.lapTime)])
        descriptor.fetchLimit = 50
        return descriptor
    }

    static let topOfBoardText = "Player sort by lapTime limit 50"

    func run() throws {
        let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("rill-bench-\(UUID())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let url = scratch.appendingPathComponent("store")
        let start = now()
        let distances = Self.distances.filter { $0 <= commits }
        print(
            "rill-bench history: \(records) players loaded in one save, then \(commits) single-record saves; "
                + "distances back: \(distances.map(String.init).joined(separator: ", ")) commits\n")
        print(
            "The store is built with durability .unsynced: what is measured reads the log or copies the file, and "
                + "an unsynced commit leaves the same log and the same file as a durable one. Every measure runs "
                + "on the store opened again with full durability (the rebuild's one commit is synced).\n")

        var backups = ComparisonTable(title: "backup beside a plain copy of data.mdb", baselineName: "copy")
        backups.rillName = "backup"
        backups.note =
            "ratio: median over rounds of backup ÷ copy, back to back; backup: Store.backup(to:), a compacted "
            + "copy (mdb_env_copyfd2) fsynced and linked into place; copy: data.mdb read and written in 1 MiB "
            + "blocks, fsynced"
        func backUp(_ store: Store, at point: BuildPoint) throws {
            guard measures.contains(.backup) else { return }
            backups.rows += try backupRows(of: store, file: url.appendingPathComponent("data.mdb"), at: point, scratch)
        }

        try build(url) { store, point in try backUp(store, at: point) }
        // The build's environment is closed (it is no longer mapped), so the one opened next has
        // the durability of its own configuration.
        let maps = (try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8)) ?? ""
        precondition(!maps.contains(url.appendingPathComponent("data.mdb").path), "the build's store is still open")

        let container = try ModelContainer(
            for: Player.self, configurations: ModelConfiguration(url: url, initialMapSize: 1 << 30))
        let head = try container.lastSequence()
        if measures.contains(.replay) {
            print(try replay(container.store, directory: url, scratch: scratch).render())
            try backUp(container.store, at: .rebuilt)
        }
        if measures.contains(.backup) { print(backups.render()) }
        if measures.contains(.asOf) {
            print(try asOf(container, head: head, distances: distances).render())
        }
        if measures.contains(.resume) {
            print(try resume(container, head: head, distances: distances).render())
        }
        if measures.contains(.compact) {
            print(try compactionTable(of: container.store, head: head, scratch: scratch).render())
        }
        print(String(format: "rill-bench history: %.0f s in all", now() - start))
    }

    /// Loads the players and makes the commits (unsynced), telling `point` after each stage.
    private func build(_ url: URL, point: (Store, BuildPoint) throws -> Void) throws {
        // Room for the whole build from the start: the map's growth is not what is measured.
        let container = try ModelContainer(
            for: Player.self,
            configurations: ModelConfiguration(url: url, durability: .unsynced, initialMapSize: 1 << 30))
        let context = container.mainContext
        var random = SeededGenerator(seed: 2026)
        let loading = try measure {
            for id in 0..<records {
                context.insert(
                    Player(
                        id: id, code: (id &* 7_919) % records,
                        lapTime: commits + 1 + Int.random(in: 0..<records, using: &random), team: id % 100,
                        name: "player \(id)"))
            }
            try context.save()
        }
        try point(container.store, .loaded)
        let committing = try measure {
            for index in 0..<commits {
                let id = Int.random(in: 0..<records, using: &random)
                context.insert(
                    Player(
                        id: id, code: (id &* 7_919) % records, lapTime: commits - index, team: id % 100,
                        name: "player \(id)"))
                try context.save()
            }
        }
        print(
            String(
                format: "built: %d players in %.1f s, then %d commits in %.1f s (%.0f commits/s); data.mdb %@\n",
                records, loading, commits, committing, Double(commits) / committing,
                Self.mebibytes(container.store.fileSize)))
        try point(container.store, .committed)
    }

    static func mebibytes(_ bytes: Int) -> String {
        String(format: "%.1f MiB", Double(bytes) / 1_048_576)
    }

    /// `seconds` in milliseconds, as a table cell.
    static func milliseconds(_ seconds: Double) -> Double { seconds * 1000 }
}
