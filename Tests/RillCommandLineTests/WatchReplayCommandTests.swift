import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// `rill watch --from A --to B` as a real process: a replay of the log between two commits,
/// against the results recorded after every commit of a random run.
@Suite struct WatchReplayCommandTests {
    let directory = TemporaryDirectory()

    static let queries = [
        "Counter sort by value desc limit 5 offset 2",
        "Counter where value >= 50 sort by value, id limit 8",
        "Counter where value < 30",
        "Counter sort by payload desc, value offset 10",
    ]

    /// A record as `rill watch --json` prints it, read back as the tests read its lines.
    static func printed(_ row: QueryRow) -> NSDictionary {
        ResultsLines.object(row.record.jsonString()) as NSDictionary
    }

    @Test func jsonReplaysReproduceTheRecordedResults() throws {
        var random = SeededGenerator(label: "watch replay oracle")
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Counter.self,
            configurations: ModelConfiguration(url: URL(fileURLWithPath: path), durability: .unsynced))
        let context = ModelContext(container)
        let queries = try Self.queries.map { try QueryParser.parse($0) }
        // The results of every query after every commit (a fresh run each time); none before the first.
        var recorded: [[[NSDictionary]]] = [queries.map { _ in [] }]
        for _ in 0..<OracleScale.value("RILL_WATCH_REPLAY_SAVES", default: 300) {
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let id = Int.random(in: 0..<60, using: &random)
                if Int.random(in: 0..<4, using: &random) == 0 {
                    context.delete(Counter(id: id, value: 0))
                } else {
                    context.insert(
                        Counter(
                            id: id, value: Int.random(in: 0..<100, using: &random),
                            payload: ["a", "b", "c"].randomElement(using: &random)!))
                }
            }
            guard try context.save() != nil else { continue }
            recorded.append(try queries.map { try container.store.run($0).map(Self.printed) })
        }
        let head = UInt64(recorded.count - 1)
        #expect(try container.store.head() == head)

        var ranges: [[String]] = [
            ["--from", "0", "--to", String(head)], ["--to", String(head / 2)], ["--from", "5"],
        ]
        for _ in 0..<OracleScale.value("RILL_WATCH_REPLAY_RANGES", default: 4) {
            let start = UInt64.random(in: 0..<head, using: &random)
            ranges.append([
                "--from", String(start), "--to", String(UInt64.random(in: (start + 1)...head, using: &random)),
            ])
        }
        for range in ranges {
            let start = range.firstIndex(of: "--from").map { UInt64(range[$0 + 1])! } ?? 0
            let end = range.firstIndex(of: "--to").map { UInt64(range[$0 + 1])! } ?? head
            for (index, query) in Self.queries.enumerated() {
                let label = "\(range.joined(separator: " ")) '\(query)'"
                let run = try runBuilt("rill", ["watch", "--json"] + range + [path, query])
                #expect(run.status == 0, "\(label): \(run.error)")
                let lines = run.output.split(separator: "\n").map(String.init)
                guard let first = lines.first else {
                    Issue.record("\(label): nothing printed")
                    continue
                }
                #expect(ResultsLines.sequence(first) == start, "\(label): \(first)")
                var records = (ResultsLines.object(first)["results"] as? [NSDictionary]) ?? []
                #expect(records == recorded[Int(start)][index], "\(label): the results at \(start)")
                var changes = lines.dropFirst()[...]
                for sequence in (start + 1)..<(end + 1) {
                    if let line = changes.first, ResultsLines.sequence(line) == sequence {
                        changes.removeFirst()
                        records = ResultsLines.apply([line], to: records)
                    }
                    guard records == recorded[Int(sequence)][index] else {
                        Issue.record(
                            "\(label): after commit \(sequence)\n\(records)\n!= \(recorded[Int(sequence)][index])")
                        break
                    }
                }
                #expect(changes.isEmpty, "\(label): lines out of order or past \(end): \(Array(changes))")
            }
        }
    }

    @Test func aTableReplayPrintsTheResultsThenEachChangeAndEnds() throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = ModelContext(container)
        for id in 0..<3 { context.insert(Counter(id: id, value: id)) }
        try context.save()
        context.insert(Counter(id: 7, value: 1))
        try context.save()
        context.delete(Counter(id: 2, value: 2))
        try context.save()
        context.insert(Counter(id: 0, value: 10))
        try context.save()

        let run = try runBuilt("rill", ["watch", path, "Counter sort by value", "--from", "1", "--to", "3"])
        #expect(run.status == 0, "\(run.error)")
        let lines = run.output.components(separatedBy: "\n")
        // The results at commit 1, as a watch shows its first results, then commits 2 and 3 only.
        #expect(lines.first?.hasPrefix("id") == true, "\(run.output)")
        #expect(lines.contains("(3 records at commit 1)"), "\(run.output)")
        #expect(lines.contains("── commit 2: 1 inserted ──"), "\(run.output)")
        #expect(lines.contains("── commit 3: 1 removed ──"), "\(run.output)")
        #expect(!run.output.contains("commit 4"), "\(run.output)")
        #expect(lines.contains { $0.hasPrefix("+ 7 ") } && lines.contains { $0.hasPrefix("- 2 ") })
        #expect(!run.output.contains("\u{1B}["), "no colors when the output is not a terminal")

        // --to alone: from the empty store.
        let fromEmpty = try runBuilt("rill", ["watch", "--to", "1", path, "Counter sort by value"])
        #expect(fromEmpty.status == 0, "\(fromEmpty.error)")
        #expect(fromEmpty.output.hasPrefix("(0 records at commit 0)"), "\(fromEmpty.output)")
        #expect(fromEmpty.output.contains("── commit 1: 3 inserted ──"), "\(fromEmpty.output)")
        // --from alone: to the head.
        let toHead = try runBuilt("rill", ["watch", "--json", "--from", "3", path, "Counter sort by value"])
        #expect(toHead.status == 0, "\(toHead.error)")
        let json = toHead.output.split(separator: "\n").map(String.init)
        #expect(json.map(ResultsLines.sequence) == [3, 4], "\(toHead.output)")
        #expect(json.first?.hasPrefix(#"{"seq":3,"results":["#) == true, "\(toHead.output)")
        #expect(json.last?.hasPrefix(#"{"seq":4,"removals":[],"insertions":[],"moves":["#) == true, "\(toHead.output)")
    }

    @Test func badReplaysFailClearly() throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        for value in 0..<3 {
            container.mainContext.insert(Counter(id: value, value: value))
            try container.mainContext.save()
        }
        for (arguments, status, message) in [
            (["--from", "3", "--to", "2"], Int32(64), "--from 3 is after --to 2"),
            (
                ["--from", "x"], 64,
                "--from takes a commit's sequence number or an ISO-8601 date such as 2026-03-01T12:00:00Z; got 'x'"
            ),
            (
                ["--to", "-1"], 64,
                "--to takes a commit's sequence number or an ISO-8601 date such as 2026-03-01T12:00:00Z; got '-1'"
            ),
            (["--from", "1", "--to", "9"], 1, "cannot replay to commit 9: the log's last commit is 3"),
            (["--from", "4"], 1, "cannot replay from commit 4: the log's last commit is 3"),
            (["--from", "1", "--since", "1"], 64, "--since 1 resumes a live watch and --from 1 replays a range"),
            (["--to", "2", "--since", "1"], 64, "give one or the other"),
        ] {
            let run = try runBuilt("rill", ["watch", path, "Counter"] + arguments)
            #expect(run.status == status, "\(arguments): \(run.error)")
            #expect(run.error.contains(message), "\(arguments): \(run.error)")
            #expect(run.output.isEmpty, "\(arguments): \(run.output)")
        }
        let connecting = try runBuilt("rill", ["watch", "--from", "1", "--connect", path, "Counter"])
        #expect(connecting.status == 64, "\(connecting.error)")
        #expect(connecting.error.contains("--from 1 replays the store's own log"), "\(connecting.error)")
        let help = try runBuilt("rill", ["watch", "--help"])
        #expect(help.output.contains("--from <seq|date>") && help.output.contains("--to <seq|date>"), "\(help.output)")

        // Dates name the last commit made at or before them: a commit's own timestamp names it.
        let history = try container.mainContext.fetchHistory(HistoryDescriptor())
        let dates = history.map { ISO8601Time.string($0.timestamp) }
        let bySequence = try runBuilt("rill", ["watch", "--json", path, "Counter", "--from", "1", "--to", "2"])
        let byDate = try runBuilt("rill", ["watch", "--json", path, "Counter", "--from", dates[0], "--to", dates[1]])
        #expect(byDate.status == 0 && byDate.output == bySequence.output, "\(byDate.error)")
    }
}
