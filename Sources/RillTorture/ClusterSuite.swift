import Foundation
import Rill
import RillJetStream
import RillLocks
import RillWorkloads

#if canImport(Glibc)
    import Glibc
#endif

/// The `cluster` suite: one replicated log on a JetStream cluster, three Rill nodes, and SIGKILL
/// to a server and to a node mid-load.
///
/// Three `nats-server`s form a JetStream cluster on loopback ports (``NATSCluster``), holding one
/// stream with three replicas. Three node processes (``ClusterFleet``, ``ClusterNode``), each with
/// its own store, save random changes concurrently and hold the same live queries. At seeded
/// moments of the load one server (at the torture scale, every other time two: the stream loses
/// its quorum), then one node, is killed with SIGKILL and started again a few seconds later (the
/// server on the same ports and directory; the node on its store, as a new incarnation that
/// catches up and opens its live queries again). Saves that fail typed meanwhile
/// (`.replicationUnavailable`) are counted, not acknowledged. Then the nodes stop saving, reach
/// the stream's last commit and exit, and the checks run: ``ClusterTranscript`` (every change of
/// every live query exactly once, in order, against ``ClusterOracle``) and
/// ``ClusterVerification`` (logs, acknowledged saves, records, indexes, final results).
package enum ClusterSuite {
    package static func run(_ options: TortureOptions) throws -> TortureReport {
        signal(SIGPIPE, SIG_IGN)
        var report = TortureReport(suite: "cluster", seed: options.seed)
        print("cluster: seed \(options.seed)")
        let started = Date()
        let load = options.scale.pick(test: 36.0, torture: 240.0)
        let kills = options.scale.pick(test: 1, torture: 4)
        let queries = 50
        var random = SeededGenerator(seed: options.seed)
        let root = try options.directory("cluster")
        let cluster = try NATSCluster(root: root, logs: root)
        defer { cluster.stopAll() }
        try cluster.startAll()
        let stream = "cluster"
        let log = try cluster.log(stream: stream)
        let fleet = try ClusterFleet(
            root: root, options: options, servers: cluster.urls, stream: stream, queries: queries,
            pause: options.scale.pick(test: 0.03, torture: 0.02))
        defer { fleet.stopAll() }
        try fleet.startAll()
        let loadStarted = Date()

        // A server kill, then a node kill, in each slot of the load; each target started again
        // after a seeded outage.
        var byTarget: [String: Int] = [:]
        var quorumLosses = 0
        let slot = load / Double(kills)
        for index in 0..<kills {
            for (part, isServer) in [(0.15, true), (0.55, false)] {
                let moment = Double(index) * slot + slot * (part + Double.random(in: 0...0.2, using: &random))
                try pause(until: loadStarted.addingTimeInterval(moment), fleet: fleet)
                let target = Int.random(in: 0..<3, using: &random)
                let outage = Double.random(in: 1...4, using: &random)
                if isServer {
                    // At the torture scale every other server fault takes two servers down: the stream
                    // loses its quorum, and every save fails typed until one is back.
                    let down = options.scale == .torture && index % 2 == 1 ? [target, (target + 1) % 3] : [target]
                    for server in down {
                        cluster.kill(server)
                        byTarget["nats-\(server + 1)", default: 0] += 1
                    }
                    if down.count > 1 { quorumLosses += 1 }
                    try pause(until: Date().addingTimeInterval(outage), fleet: fleet)
                    for server in down { try cluster.start(server) }
                } else {
                    fleet.kill(target)
                    byTarget["node \(target)", default: 0] += 1
                    usleep(UInt32(outage * 1_000_000))
                    try fleet.start(target)
                }
                report.faults += 1
            }
        }
        try pause(until: loadStarted.addingTimeInterval(load), fleet: fleet)
        let loadTime = Date().timeIntervalSince(loadStarted)

        // Every node idle, then the stream's last commit, which every node waits for before it ends.
        try fleet.stopSaving()
        let journals = (0..<fleet.count).map(fleet.journal)
        try waitUntilIdle(journals, fleet: fleet)
        let last = try ClusterNode.retrying("reading the stream's last commit") { try log.last() }
        try fleet.end(at: last)
        for (node, status) in fleet.waitForExit(timeout: 120).enumerated() where status != 0 {
            report.problems.append(
                "node \(node) \(status.map { "exited with status \($0)" } ?? "did not end within 120 s") "
                    + "(see \(fleet.root.path)/node-\(node)/stderr.log)")
        }
        let checking = Date()
        let entries = try streamEntries(log, last: last)
        cluster.stopAll()
        if let late = try? log.last(), late != last {
            report.problems.append("the stream's last commit moved from \(last) to \(late) once every node was idle")
        }

        let oracle = try ClusterOracle(queries: ClusterQuery.all(count: queries, seed: options.seed), entries: entries)
        // One journal a thread: reading them is most of the checks' time.
        let read = Lock<[Int: Result<ClusterTranscript, any Error>]>([:])
        DispatchQueue.concurrentPerform(iterations: journals.count) { node in
            let transcript = Result { try ClusterTranscript(node: node, path: journals[node], oracle: oracle) }
            read.withLock { $0[node] = transcript }
        }
        let transcripts = try read.withLock { results in try journals.indices.map { try results[$0]!.get() } }
        for transcript in transcripts { report.problems += transcript.problems }
        let verification = ClusterVerification.verify(
            stream: entries, oracle: oracle, transcripts: transcripts, stores: (0..<fleet.count).map(fleet.store))
        report.problems += verification
        let lost = ClusterVerification.acknowledgedProblems(transcripts, stream: entries)
        report.problems += lost
        report.lost = lost.count
        report.acknowledged = transcripts.map(\.acknowledged.count).reduce(0, +)

        var refusals: [String: Int] = [:]
        for transcript in transcripts { refusals.merge(transcript.refusals, uniquingKeysWith: +) }
        for code in refusals.keys
        where ![RillError.Code.uniqueConflict, .replicationUnavailable, .invalidRecord].map(\.description).contains(
            code)
        {
            report.problems.append("\(refusals[code]!) saves failed with \(code), which the suite does not expect")
        }
        report.add(
            "kills", byTarget.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: " / "))
        report.add("quorum losses", quorumLosses)
        report.add("commits", last)
        // A save cut off by a kill, or whose answer the stream did not give in time, may be committed all the same.
        report.add("committed unacknowledged", Int(last) - report.acknowledged)
        report.add("acknowledged by node", transcripts.map { "\($0.acknowledged.count)" }.joined(separator: "/"))
        report.add("unique conflicts", refusals[RillError.Code.uniqueConflict.description] ?? 0)
        report.add("unavailable", refusals[RillError.Code.replicationUnavailable.description] ?? 0)
        report.add("updates of deleted records", refusals[RillError.Code.invalidRecord.description] ?? 0)
        report.add("incarnations", transcripts.map { "\($0.incarnations)" }.joined(separator: "/"))
        report.add(
            "live queries", "\(queries) a node, \(transcripts.map(\.changesChecked).reduce(0, +)) changes checked")
        report.add("load", String(format: "%.1f s", loadTime))
        report.add("checks", String(format: "%.1f s", Date().timeIntervalSince(checking)))
        report.add("time", String(format: "%.1f s", Date().timeIntervalSince(started)))
        if report.passed { try? FileManager.default.removeItem(at: root) } else { report.add("files", root.path) }
        return report
    }

    /// Waits until `moment`, failing when a node exits meanwhile.
    private static func pause(until moment: Date, fleet: ClusterFleet) throws {
        while Date() < moment {
            if let (node, status) = fleet.exited.first {
                throw TortureUsage(
                    "node \(node) exited with status \(status) mid-load (see \(fleet.root.path)/node-\(node)/stderr.log)"
                )
            }
            usleep(50_000)
        }
    }

    /// Waits (up to 60 s) until each journal's last incarnation is idle.
    private static func waitUntilIdle(_ journals: [String], fleet: ClusterFleet) throws {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let idle = try journals.allSatisfy { path in
                let lines = try ClusterJournal.read(path: path).lines
                guard let start = lines.lastIndex(where: { $0.kind == "start" }) else { return false }
                return lines[start...].contains { $0.kind == "idle" }
            }
            if idle { return }
            if let (node, status) = fleet.exited.first {
                throw TortureUsage("node \(node) exited with status \(status) before it was idle")
            }
            usleep(50_000)
        }
        throw TortureUsage("the nodes did not stop saving within 60 s")
    }

    /// The stream's commits 1…`last`, decoded.
    private static func streamEntries(_ log: JetStreamLog, last: UInt64) throws -> [LogEntry] {
        guard last > 0 else { return [] }
        return try (1...last).map { sequence in
            guard let bytes = try ClusterNode.retrying("reading the stream", { try log.entry(sequence) }) else {
                throw TortureUsage("the stream does not hold commit \(sequence)")
            }
            return try bytes.withUnsafeBytes { try LogEntry(sequence: sequence, bytes: $0) }
        }
    }
}
