import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// `rill query --as-of`: what a query printed right after each commit, it prints again later as
/// of that commit, by sequence and by the commit's date.
@Suite struct QueryAsOfCommandTests {
    let directory = TemporaryDirectory()

    func rill(_ arguments: [String]) throws -> ProcessRun { try runBuilt("rill", arguments) }

    @Test func aQueryAsOfACommitPrintsWhatItPrintedThen() throws {
        var random = SeededGenerator(label: "rill query --as-of")
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = container.mainContext
        let queries = [
            "Counter sort by value desc limit 4", "Counter where value >= 5 sort by payload, value offset 1",
            "Counter where payload == \"b\"",
        ]
        var printed: [[String]] = []
        for _ in 0..<30 {
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let id = Int.random(in: 0..<12, using: &random)
                if Int.random(in: 0..<4, using: &random) == 0 {
                    context.delete(Counter(id: id, value: 0))
                } else {
                    context.insert(
                        Counter(
                            id: id, value: Int.random(in: 0..<10, using: &random),
                            payload: ["a", "b"].randomElement(using: &random)!))
                }
            }
            guard try context.save() != nil else { continue }
            printed.append(try queries.map { try rill(["query", "--json", path, $0]).output })
        }
        let history = try context.fetchHistory(HistoryDescriptor())
        #expect(history.count == printed.count)
        for sequence in [1, printed.count / 2, printed.count]
            + (0..<5).map({ _ in Int.random(in: 1...printed.count, using: &random) })
        {
            for (index, query) in queries.enumerated() {
                let run = try rill(["query", "--json", "--as-of", "\(sequence)", path, query])
                #expect(run.status == 0, "\(run.error)")
                #expect(run.output == printed[sequence - 1][index], "as of \(sequence): \(query), seed \(random.seed)")
            }
            // The commit's own timestamp names it (or a later commit made in the same instant).
            let date = ISO8601Time.string(history[sequence - 1].timestamp)
            let at = history.last { $0.timestamp <= history[sequence - 1].timestamp }!.sequence
            let table = try rill(["query", "--as-of", date, path, queries[0]])
            #expect(table.status == 0 && table.output.hasSuffix("as of commit \(at))\n"), "\(table.output)")
        }
        let empty = try rill(["query", "--as-of", "0", path, queries[0]])
        #expect(empty.output == "(0 records as of commit 0)\n")
        let early = try rill(["query", "--as-of", "2001-01-01", path, queries[0]])
        #expect(early.output == "(0 records as of commit 0)\n")

        let ahead = try rill(["query", "--as-of", "\(printed.count + 1)", path, queries[0]])
        #expect(
            ahead.status == 1 && ahead.error.contains("the log's last commit is \(printed.count)"), "\(ahead.error)")
        let bad = try rill(["query", "--as-of", "soon", path, queries[0]])
        #expect(bad.status == 64 && bad.error.contains("--as-of takes a commit's sequence number"))
        let explain = try rill(["query", "--explain", "--as-of", "1", path, queries[0]])
        #expect(explain.status == 64 && explain.error.contains("it does not take --as-of"))
    }
}
