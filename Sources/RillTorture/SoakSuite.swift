import Foundation
import Rill
import RillWorkloads

#if canImport(Glibc)
    import Glibc
#endif

/// The `soak` suite: mixed load on one store for a long while (30 minutes at `.torture` scale,
/// 20 s at `.test`), sampled every few seconds, failing when a measure grows without bound.
///
/// The load: two writer processes, `rill serve` saved to by a ``DaemonWriter`` and subscribed to
/// by subscribers that join and leave (``SubscriberChurn``), a process holding 1,000 typed live
/// queries (``LiveQueryWorker``), one `rill compact` a quarter of the way through and one
/// `rill backup` (checked with the full verification) at 5/12. Each sample reads the resident
/// memory of every long-lived process (`VmRSS`), the size of data.mdb and its free pages, and the
/// reader slots in use (`mdb_stat`); ``SoakSeries`` says whether each grows without bound. The
/// file itself grows with the log (the log keeps every commit after the horizon, by design):
/// what must stay bounded is its free space, which a reader pinning an old snapshot would make
/// grow with every commit. It ends with the full verification of the store and every save
/// acknowledged.
package enum SoakSuite {
    package static func run(_ options: TortureOptions) throws -> TortureReport {
        signal(SIGPIPE, SIG_IGN)
        var report = TortureReport(suite: "soak", seed: options.seed)
        let started = Date()
        let duration = options.scale.pick(test: 20.0, torture: 1800.0)
        let interval = options.scale.pick(test: 1.0, torture: 10.0)
        let liveQueries = options.scale.pick(test: 200, torture: 1000)
        let root = try options.directory("soak")
        let store = root.appendingPathComponent("store").path
        let socket = store + "/rill.sock"
        let log = { (name: String) in root.appendingPathComponent(name).path }
        _ = try ModelContainer(
            for: TortureItem.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: store)))

        let daemon = try LineProcess(
            options.product("rill"), ["serve", store, "--log-level", "warning"], log: log("daemon.log"))
        defer { daemon.stop(SIGKILL) }
        guard waitUntilServing(socket: socket, daemon) else { throw TortureUsage("rill serve did not start") }
        let writers = try (0..<2).map { number in
            try LineProcess(
                options.product("rill-torture"),
                [
                    "worker", "writer", store, String(number), "--pause", "0.02", "--seed",
                    String(options.seed &+ UInt64(number)),
                ],
                log: log("writer\(number).log"))
        }
        defer { for writer in writers { writer.stop(SIGKILL) } }
        let queries = try LineProcess(
            options.product("rill-torture"),
            ["worker", "live-queries", store, String(liveQueries), "--seed", String(options.seed % 1_000_000)],
            log: log("live-queries.log"))
        defer { queries.stop(SIGKILL) }
        guard queries.wait(timeout: 120, until: { $0.contains { $0.hasPrefix("ready") } }) else {
            throw TortureUsage("the live-query worker did not start (see live-queries.log)")
        }
        let daemonWriter = DaemonWriter(socket: socket, writer: 2, seed: options.seed, pause: 0.05)
        daemonWriter.start()
        let churn = SubscriberChurn(
            socket: socket, maximum: options.scale.pick(test: 5, torture: 20), seed: options.seed)
        churn.start()

        let processes: [(name: String, process: LineProcess)] = [
            ("daemon", daemon), ("writer 0", writers[0]), ("writer 1", writers[1]), ("live queries", queries),
        ]
        // The rule reads the anonymous memory: the resident pages of data.mdb's map (in VmRSS
        // too) follow the file, which grows with the log.
        var memory = processes.map { SoakSeries(name: "heap \($0.name)", unit: .mebibytes, slack: 16 * 1_048_576) }
        var resident = processes.map { SoakSeries(name: "VmRSS \($0.name)", unit: .mebibytes, slack: 0) }
        var free = SoakSeries(name: "free space in data.mdb", unit: .mebibytes, tolerance: 0.5, slack: 4 * 1_048_576)
        var slots = SoakSeries(name: "reader slots", unit: .count, tolerance: 0.25, slack: 4)
        var file = SoakSeries(name: "data.mdb", unit: .mebibytes, slack: 0)
        var pinned: (behind: Int, holder: String, at: TimeInterval) = (0, "", 0)
        var horizon: UInt64 = 0
        var compacted = false
        var backedUp = false
        let begin = Date()
        while Date().timeIntervalSince(begin) < duration {
            usleep(UInt32(interval * 1_000_000))
            let elapsed = Date().timeIntervalSince(begin)
            for (index, entry) in processes.enumerated() {
                guard entry.process.isRunning else {
                    report.problems.append("\(entry.name) exited after \(Int(elapsed)) s")
                    continue
                }
                memory[index].add(Double(residentBytes(entry.process.pid, "RssAnon")))
                resident[index].add(Double(residentBytes(entry.process.pid)))
            }
            let environment = environmentStatus(store: store)
            file.add(Double(fileSize(store + "/data.mdb")))
            free.add(Double(environment?.freeBytes ?? 0))
            // One read of the reader table gives both the slots in use and the oldest snapshot.
            let readers = readerSlots(store: store) ?? []
            slots.add(Double(readers.count))
            // Who holds the oldest snapshot, and how far behind: what keeps freed pages from reuse.
            let oldest = environment.flatMap { status in
                readers.compactMap { slot in slot.transaction.map { (pid: slot.pid, transaction: $0) } }
                    .min { $0.transaction < $1.transaction }
                    .map { (pid: $0.pid, behind: status.lastTransaction - min($0.transaction, status.lastTransaction)) }
            }
            let holder = oldest.map { read in
                processes.first { $0.process.pid == read.pid }?.name ?? "pid \(read.pid)"
            }
            if let oldest, let holder, oldest.behind > pinned.behind {
                pinned = (oldest.behind, holder, elapsed)
            }
            print(
                String(format: "soak %5.0f s:", elapsed)
                    + zip(processes, zip(resident, memory)).map {
                        " \($0.0.name) \(mebibytes($0.1.0.values.last ?? 0))/\(mebibytes($0.1.1.values.last ?? 0))"
                    }.joined()
                    + ", data.mdb \(mebibytes(file.values.last!)), free \(mebibytes(free.values.last!)), "
                    + "slots \(Int(slots.values.last!))"
                    + (oldest.map { ", oldest read \($0.behind) behind (\(holder!))" } ?? ""))
            // A line per sample as it is taken, also when the output is a file (`make soak > log`).
            fflush(nil)
            if !compacted, elapsed >= duration / 4 {
                compacted = true
                let problems = compact(store: store, options: options, horizon: &horizon, report: &report)
                report.problems += problems
            }
            if !backedUp, elapsed >= duration * 5 / 12 {
                backedUp = true
                report.problems += backup(store: store, into: root.appendingPathComponent("backup"), options: options)
            }
            if !report.problems.isEmpty { break }
        }
        churn.stop()
        daemonWriter.stop()
        for writer in writers { writer.stop(SIGKILL) }
        let changes = queries.lines.last { $0.hasPrefix("changes ") }.map { $0.dropFirst(8) } ?? "0"
        queries.stop(SIGKILL)
        daemon.stop(SIGKILL)
        let everySave = writers.flatMap { $0.lines.compactMap(TortureWriter.acknowledged) } + daemonWriter.acknowledged
        report.acknowledged = everySave.count
        // The commits up to the horizon are folded into its snapshot: the log holds the later ones.
        let acknowledged = everySave.filter { $0.sequence > horizon }
        let final = StoreVerification.verify(directory: store, acknowledged: acknowledged)
        report.record(final, at: "at the end")
        report.lost = KillSuite.lost(in: final)
        for series in memory + [free, slots] {
            if let growth = series.growth { report.problems.append(growth) }
        }
        for series in resident + memory + [file, free, slots] { print("  " + series.summary()) }
        report.add("samples", file.values.count)
        report.add("live queries", liveQueries)
        report.add("their changes", changes)
        report.add("subscribers joined", churn.joined)
        report.add("refused", churn.refused)
        report.add("daemon saves unanswered", daemonWriter.unanswered)
        if let peak = resident.first?.values.max() { report.add("daemon peak VmRSS", "\(mebibytes(peak)) MiB") }
        report.add("data.mdb", "\(mebibytes(file.values.first ?? 0)) → \(mebibytes(file.values.last ?? 0)) MiB")
        report.add("reader slots max", Int(slots.values.max() ?? 0))
        report.add(
            "oldest read seen",
            pinned.behind == 0
                ? "none behind the head"
                : "\(pinned.behind) transactions behind, by \(pinned.holder) at \(Int(pinned.at)) s")
        report.add("time", String(format: "%.1f s", Date().timeIntervalSince(started)))
        if report.passed { try? FileManager.default.removeItem(at: root) }
        return report
    }

    // MARK: - Compaction and backup

    /// `rill compact --before` the middle of the log, while everything runs; its problems.
    private static func compact(
        store: String, options: TortureOptions, horizon: inout UInt64, report: inout TortureReport
    ) -> [String] {
        guard let head = try? Store(directory: store, options: StoreOptions(), create: false).head(), head > 2 else {
            return ["the log cannot be read before the compaction"]
        }
        let run = runToEnd(options.product("rill"), ["compact", store, "--before", String(head / 2), "--json"])
        guard run.status == 0,
            let object = try? JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any],
            let reached = (object["horizon"] as? NSNumber)?.uint64Value
        else { return ["rill compact failed (status \(run.status)): \(run.output)"] }
        horizon = reached
        report.add("compaction", run.output.trimmingCharacters(in: .whitespacesAndNewlines))
        return []
    }

    /// `rill backup` while everything runs, then the full verification of the copy; its problems.
    private static func backup(store: String, into destination: URL, options: TortureOptions) -> [String] {
        let run = runToEnd(options.product("rill"), ["backup", store, destination.path])
        guard run.status == 0 else { return ["rill backup failed (status \(run.status)): \(run.output)"] }
        return StoreVerification.verify(directory: destination.path, acknowledged: []).map { "the backup: \($0)" }
    }

    // MARK: - Samples

    /// A figure of /proc/<pid>/status (`VmRSS`: all the resident memory; `RssAnon`: its anonymous
    /// part, the heap and stacks, without the pages of mapped files), in bytes.
    static func residentBytes(_ pid: Int32, _ field: String = "VmRSS") -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return 0 }
        return kilobytes * 1024
    }

    static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// The free pages of the store's file, in bytes, and its last transaction, from `mdb_stat -ef`.
    static func environmentStatus(store: String) -> (freeBytes: Int, usedBytes: Int, lastTransaction: Int)? {
        let run = runToEnd("/usr/bin/mdb_stat", ["-ef", store])
        func number(after label: String) -> Int? {
            run.output.split(separator: "\n").first { $0.contains(label) }
                .flatMap { $0.split(separator: ":").last }
                .flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        }
        guard let page = number(after: "Page size:"), let free = number(after: "Free pages:"),
            let used = number(after: "Number of pages used:"), let last = number(after: "Last transaction ID:")
        else { return nil }
        return (free * page, used * page, last)
    }

    /// The reader slots in use, from `mdb_stat -r`: each one's process and the transaction it
    /// reads, nil for a slot between reads; nil when the table cannot be read.
    static func readerSlots(store: String) -> [(pid: Int32, transaction: Int?)]? {
        // "Reader Table Status", "    pid     thread     txnid", then a line a slot: the pid, the
        // thread, and the transaction read, or "-" for a slot between reads; or "(no active readers)".
        let run = runToEnd("/usr/bin/mdb_stat", ["-r", store])
        guard run.output.hasPrefix("Reader Table Status") else { return nil }
        return run.output.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 3, let pid = Int32(fields[0]) else { return nil }
            return (pid, Int(fields[2]))
        }
    }

    private static func mebibytes(_ bytes: Double) -> String { String(format: "%.1f", bytes / 1_048_576) }

    /// Runs `executable arguments…` to its end; its status and standard output, with its
    /// standard error after it.
    static func runToEnd(_ executable: String, _ arguments: [String]) -> (status: Int32, output: String) {
        guard let run = try? WorkerRun.run(executable, arguments) else { return (-1, "cannot run \(executable)") }
        return (run.status, run.standardOutput + run.standardError)
    }

    private static func waitUntilServing(socket: String, _ daemon: LineProcess) -> Bool {
        let client = DaemonClient(socket: socket)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, daemon.isRunning {
            if client.request("GET", "/v1/health")?.status == 200 { return true }
            usleep(10_000)
        }
        return false
    }
}
