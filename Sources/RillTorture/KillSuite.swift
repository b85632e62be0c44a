import Foundation
import Rill
import RillWorkloads

#if canImport(Glibc)
    import Glibc
#endif

/// The `kill` suite: SIGKILL at random moments, to processes sharing one store.
///
/// Two writer processes, a `rill watch --json` and `rill serve` (saved to through it by a
/// ``DaemonWriter``, and followed by an SSE subscriber, `rill watch --connect --retry`) run on one
/// store (``KillFleet``). At seeded random moments one of the writers, the watch or the daemon is
/// killed with SIGKILL and started again: a writer with its writer number, the watch with
/// `--since` the last sequence it printed, the daemon on the same socket. After each kill:
///
/// - the killed process's reader slot is gone once the store was opened again (`mdb_stat -r`:
///   the restarted process clears it at open, with `mdb_reader_check`);
/// - the full verification (``StoreVerification``) holds, with every save acknowledged so far.
///
/// At the end, both watchers' lines are checked against a replay of the log (``WatchOracle``,
/// ``WatchTranscript``): every change to the watched query exactly once, in order, across the
/// watch's restarts and the daemon's; and the oracle's final results are those of a fresh fetch.
package enum KillSuite {
    package static func run(_ options: TortureOptions) throws -> TortureReport {
        signal(SIGPIPE, SIG_IGN)
        var report = TortureReport(suite: "kill", seed: options.seed)
        let started = Date()
        let kills = options.scale.pick(test: 20, torture: 100)
        let pauses = options.scale.pick(test: 0.05...0.5, torture: 0.2...1.5)
        var random = SeededGenerator(seed: options.seed)
        let root = try options.directory("kill")
        let store = root.appendingPathComponent("store").path
        // The entity exists before the daemon saves to it and the watch queries it.
        _ = try ModelContainer(
            for: TortureItem.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: store)))
        let fleet = KillFleet(store: store, logs: root, options: options)
        defer { fleet.stopAll() }
        try fleet.startAll()
        var byTarget: [KillFleet.Target: Int] = [:]
        var verifying = 0.0
        for index in 1...kills {
            usleep(UInt32(Double.random(in: pauses, using: &random) * 1_000_000))
            let target = KillFleet.Target.allCases.randomElement(using: &random)!
            guard let pid = fleet.kill(target) else { continue }
            report.faults += 1
            byTarget[target, default: 0] += 1
            let moment = "kill \(index) (\(target.rawValue), pid \(pid))"
            try fleet.start(target)
            if !waitUntilCleared(pid, store: store) {
                report.problems.append(
                    "\(moment): the killed process's reader slot remains after the store was opened again")
            }
            let verification = Date()
            report.record(StoreVerification.verify(directory: store, acknowledged: fleet.acknowledged), at: moment)
            verifying += Date().timeIntervalSince(verification)
            // A broken store breaks every later verification: the first problems say it all.
            if !report.problems.isEmpty { break }
        }
        try fleet.finish { try Store(directory: store, options: StoreOptions(), create: false).head() }
        let acknowledged = fleet.acknowledged
        report.acknowledged = acknowledged.count
        let final = StoreVerification.verify(directory: store, acknowledged: acknowledged)
        report.record(final, at: "at the end")
        report.lost = Self.lost(in: final)
        var oracle = fleet.oracle
        try oracle.replay(directory: store)
        let watched = fleet.watchTranscript.check(against: oracle)
        let subscribed = fleet.subscriberTranscript.check(against: oracle)
        report.problems += watched.problems + subscribed.problems
        report.problems += try freshFetchProblems(store: store, oracle: oracle)
        report.add(
            "kills by target",
            KillFleet.Target.allCases.map { "\($0.rawValue) \(byTarget[$0] ?? 0)" }.joined(separator: " / "))
        report.add("commits", oracle.last)
        report.add("commits changing the watched query", oracle.changes.count)
        report.add("changes seen by rill watch", watched.changes)
        report.add("by the SSE subscriber", subscribed.changes)
        report.add("daemon saves unanswered", fleet.unansweredSaves)
        report.add("verification", String(format: "%.1f s", verifying))
        report.add("time", String(format: "%.1f s", Date().timeIntervalSince(started)))
        if report.passed { try? FileManager.default.removeItem(at: root) }
        return report
    }

    /// The acknowledged saves a verification found missing or different.
    static func lost(in problems: [String]) -> Int {
        problems.filter { $0.hasPrefix("the acknowledged commit") || $0.contains("lacks the acknowledged") }.count
    }

    /// Waits (up to 10 s) until no reader slot of process `pid` is in the store's reader table,
    /// as `mdb_stat -r` reads it (without clearing anything itself); returns whether it is gone.
    static func waitUntilCleared(_ pid: Int32, store: String) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        repeat {
            guard let pids = readerPIDs(store: store) else { return false }
            if !pids.contains(pid) { return true }
            usleep(20_000)
        } while Date() < deadline
        return false
    }

    /// The processes holding reader slots of the store, from `mdb_stat -r`; nil when it fails.
    static func readerPIDs(store: String) -> [Int32]? {
        guard let run = try? WorkerRun.run("/usr/bin/mdb_stat", ["-r", store]) else { return nil }
        // "Reader Table Status", then "    pid     thread     txnid" and a line a slot, or
        // "(no active readers)" (with exit status 1).
        let text = run.standardOutput
        guard text.hasPrefix("Reader Table Status") else { return nil }
        return text.split(separator: "\n").compactMap { line in
            line.split(separator: " ").first.flatMap { Int32($0) }
        }
    }

    /// The oracle's final results against a fresh fetch of the same query.
    static func freshFetchProblems(store: String, oracle: WatchOracle) throws -> [String] {
        let container = try ModelContainer(
            for: TortureItem.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: store)))
        let writer = oracle.writer
        var descriptor = FetchDescriptor<TortureItem>(
            predicate: #Predicate { $0.writer == writer }, sortBy: [SortDescriptor(\.number, order: .reverse)])
        descriptor.fetchLimit = oracle.limit
        let fetched = try ModelContext(container).fetch(descriptor).map {
            WatchOracle.Row(id: $0.id, number: $0.number)
        }
        let replayed = oracle.rows(at: oracle.last)
        return fetched == replayed
            ? [] : ["a fresh fetch gives \(fetched) where the replay of the log gives \(replayed)"]
    }
}
