import Foundation
import Rill
import RillTestSupport
import RillTorture
import RillWorkloads
import Testing

/// The cluster suite's checks find what they must: the journal of a node's saves and live
/// queries on one store passes against the replay of its log, and a change left out, a change
/// repeated, a change that did not happen, or an acknowledged save journaled otherwise than it
/// was committed is each named.
@Suite struct ClusterTranscriptTests {
    /// A node's journal and the oracle of its store's log: saves and 50 live queries, as a cluster
    /// node makes them, on one store without a replicated log.
    static func run(_ directory: TemporaryDirectory, seed: UInt64) throws -> (lines: [String], oracle: ClusterOracle) {
        let store = try Store(directory: directory.path("store"), options: StoreOptions(), create: true)
        try ClusterItem.register(in: store)
        let path = directory.path("journal.ndjson")
        let journal = try ClusterJournal(path: path)
        var start = ClusterJournal.Line(kind: "start")
        start.incarnation = 1
        start.sequence = 0
        journal.append(start)
        let queries = ClusterQuery.all(count: 50, seed: seed)
        let live = try queries.enumerated().map { index, query in
            try RecordLiveQuery(try QueryParser.parse(query.text), store: store) { event in
                if let line = ClusterJournal.line(of: event, query: index) { journal.append(line) }
            }
        }
        var saver = ClusterSaver(store: store, journal: journal, node: 0, incarnation: 1, seed: seed)
        for _ in 0..<150 { saver.saveOnce() }
        for query in live { try query.catchUp() }
        var end = ClusterJournal.Line(kind: "end")
        end.sequence = try store.head()
        journal.append(end)
        let oracle = try ClusterOracle(queries: queries, entries: try store.entries(after: 0))
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return (text.split(separator: "\n").map(String.init), oracle)
    }

    static func problems(_ lines: [String], _ directory: TemporaryDirectory, oracle: ClusterOracle) throws -> [String] {
        let path = directory.path("checked.ndjson")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return try ClusterTranscript(node: 0, path: path, oracle: oracle).problems
    }

    @Test func passesAJournalAndNamesWhatIsLostRepeatedOrWrong() throws {
        let directory = TemporaryDirectory()
        let seed = UInt64.random(in: 1...UInt64(UInt32.max))
        let (lines, oracle) = try Self.run(directory, seed: seed)
        #expect(oracle.last > 100, "seed \(seed)")
        #expect(try Self.problems(lines, directory, oracle: oracle) == [], "seed \(seed)")
        let transcript = try ClusterTranscript(node: 0, path: directory.path("checked.ndjson"), oracle: oracle)
        #expect(transcript.end == oracle.last && transcript.finalRows.count == 50, "seed \(seed)")
        #expect(ClusterVerification.acknowledgedProblems([transcript], stream: try entries(directory)) == [])

        // A change left out: the query was not told of its commit.
        let changes = lines.indices.filter { lines[$0].contains(#""kind":"change""#) }
        try #require(changes.count > 10, "seed \(seed)")
        var dropped = lines
        dropped.remove(at: changes[changes.count / 2])
        #expect(
            try Self.problems(dropped, directory, oracle: oracle).contains { $0.contains("was not told of commits") },
            "seed \(seed)")
        // A change told twice: out of order.
        var repeated = lines
        repeated.insert(lines[changes[3]], at: changes[3] + 1)
        #expect(
            try Self.problems(repeated, directory, oracle: oracle).contains { $0.contains("out of order") },
            "seed \(seed)")
        // A line a kill cut short is allowed only before the next incarnation's start.
        var torn = lines
        torn.insert(String(lines[changes[5]].prefix(20)), at: changes[5] + 1)
        #expect(
            try Self.problems(torn, directory, oracle: oracle).contains { $0.contains("not cut by a kill") },
            "seed \(seed)")
        // An acknowledged save journaled with a number its commit does not hold.
        let saveIndex = try #require(lines.firstIndex { $0.contains(#""kind":"save""#) })
        var line = try JSONDecoder().decode(ClusterJournal.Line.self, from: Data(lines[saveIndex].utf8))
        line.writes![0].number = (line.writes![0].number ?? 0) + 1
        var altered = lines
        altered[saveIndex] = String(decoding: try JSONEncoder().encode(line), as: UTF8.self)
        try Data((altered.joined(separator: "\n") + "\n").utf8).write(
            to: URL(fileURLWithPath: directory.path("checked.ndjson")))
        let wrong = try ClusterTranscript(node: 0, path: directory.path("checked.ndjson"), oracle: oracle)
        #expect(
            ClusterVerification.acknowledgedProblems([wrong], stream: try entries(directory)).contains {
                $0.contains("the node was told")
            }, "seed \(seed)")
    }

    func entries(_ directory: TemporaryDirectory) throws -> [LogEntry] {
        try Store(directory: directory.path("store"), options: StoreOptions(), create: false).entries(after: 0)
    }
}
