import Foundation
import RillTestSupport
import RillWorkloads
import Synchronization
import Testing

@testable import Rill

/// A record live query's progress reports (what the daemon's `progress` events and the
/// `{"seq":N}` lines of `rill watch --json` carry): each comes after the change of every commit
/// up to its sequence, so that the results a handler holds when it is told of progress at N are
/// the results as of commit N — checked against a fresh run recorded after every save.
@Suite struct RecordLiveQueryProgressTests {
    let directory = TemporaryDirectory()

    @Test func progressComesAfterEveryChangeUpToItsCommit() throws {
        var random = SeededGenerator(label: "record live query progress")
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let store = container.store
        let context = ModelContext(container)
        for id in 0..<30 { context.insert(Counter(id: id, value: id)) }
        try context.save()
        // Queries that most commits leave as they are, and one that most commits change.
        let texts = [
            "Counter where value >= 900 sort by value desc limit 3", "Counter where value < 5 sort by id",
            "Counter sort by value limit 4 offset 2",
        ]
        var followed: [(live: RecordLiveQuery, events: RecordLiveQueryTests.Events, query: Query)] = []
        var history: [UInt64: [[RecordLiveQueryTests.Row]]] = [:]
        for text in texts {
            let query = try QueryParser.parse(text)
            let events = RecordLiveQueryTests.Events()
            followed.append((try RecordLiveQuery(query, store: store) { events.append($0) }, events, query))
        }
        func record() throws {
            history[try store.head()] = try followed.map { try store.run($0.query).map(RecordLiveQueryTests.Row.init) }
        }
        try record()
        var asked = [Int](repeating: 0, count: followed.count)
        for _ in 0..<OracleScale.value("RILL_PROGRESS_SAVES", default: 300) {
            let id = Int.random(in: 0..<40, using: &random)
            if Int.random(in: 0..<8, using: &random) == 0 {
                context.delete(Counter(id: id, value: 0))
            } else {
                context.insert(Counter(id: id, value: Int.random(in: 0..<1_000, using: &random)))
            }
            try context.save()
            try record()
            // Asked for at any moment, while the follower may still be behind.
            for index in followed.indices where Int.random(in: 0..<3, using: &random) == 0 {
                followed[index].live.reportProgress()
                asked[index] += 1
            }
        }
        let head = try store.head()
        for index in followed.indices {
            followed[index].live.reportProgress()
            asked[index] += 1
            // The reports asked for before are delivered before this returns.
            try followed[index].live.catchUp()
        }
        for (index, item) in followed.enumerated() {
            let events = item.events.take()
            guard case .initial(let initial, let start)? = events.first else {
                Issue.record("\(texts[index]): no initial results")
                continue
            }
            var rows = initial.map(RecordLiveQueryTests.Row.init)
            var sequence = start
            var reports: [UInt64] = []
            for event in events.dropFirst() {
                switch event {
                case .change(let change):
                    #expect(change.sequence > sequence, "\(texts[index]): change \(change.sequence) after \(sequence)")
                    sequence = change.sequence
                    rows = change.apply(to: rows.map { QueryRow(key: $0.key, record: $0.record) }).map(
                        RecordLiveQueryTests.Row.init)
                case .progress(let reached):
                    #expect(reached >= sequence, "\(texts[index]): progress \(reached) after \(sequence)")
                    #expect(reports.last.map { reached >= $0 } ?? true, "\(texts[index]): progress went back")
                    #expect(
                        rows == history[reached]?[index],
                        "\(texts[index]): the results held at progress \(reached) are not those of that commit")
                    sequence = reached
                    reports.append(reached)
                case .initial, .failed:
                    Issue.record("\(texts[index]): unexpected \(event)")
                }
            }
            #expect(reports.count == asked[index], "\(texts[index]): every report asked for came")
            #expect(reports.last == head, "\(texts[index]): the last report is at the head")
        }
    }
}
