import Foundation
import RillLocks
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Live text queries (what `rill watch` and `rill serve` follow) against a fresh run of the same
/// query: random predicates, sorts and windows over a store receiving random saves. After each
/// save, every query's previous results with the changes it was told of applied equal a fresh
/// run; a query resumed after an earlier commit, given the results at that commit, reaches the
/// same results from the changes it is told of.
@Suite struct RecordLiveQueryTests {
    let directory = TemporaryDirectory()

    /// What one query's handler was told, in order.
    final class Events: Sendable {
        let received = Lock<[RecordLiveQuery.Event]>([])
        func take() -> [RecordLiveQuery.Event] {
            received.withLock { events in
                defer { events = [] }; return events
            }
        }
        func append(_ event: RecordLiveQuery.Event) { received.withLock { $0.append(event) } }
    }

    struct Row: Equatable, CustomStringConvertible {
        var key: [UInt8]
        var record: RecordValue
        init(_ row: QueryRow) {
            key = row.key
            record = row.record
        }
        var description: String { record.jsonString() }
    }

    static let sortPaths: [[String]] = [
        ["stock"], ["price"], ["name"], ["maker"], ["released"], ["spec", "weight"], ["rating"],
    ]

    static func randomQuery(_ generator: inout TextQueryOracleTests.Generator) -> Query {
        let (predicate, _) = generator.predicate(depth: 2)
        var query = Query(
            entity: "Gadget", predicate: Int.random(in: 0..<6, using: &generator.random) == 0 ? nil : predicate)
        for _ in 0..<Int.random(in: 0...2, using: &generator.random) {
            query.sort.append(
                QuerySortKey(path: generator.pick(sortPaths), ascending: Bool.random(using: &generator.random)))
        }
        if Int.random(in: 0..<3, using: &generator.random) > 0 {
            query.limit = Int.random(in: 0...25, using: &generator.random)
        }
        if Bool.random(using: &generator.random) { query.offset = Int.random(in: 0...10, using: &generator.random) }
        return query
    }

    /// Applies the changes of `events` to `rows`; fails on an initial event or a failure, or on
    /// a change whose elements are not those of the results before it and after it (those of
    /// `resultsAt` its commit when known, else `rows` with it applied).
    static func apply(
        _ events: [RecordLiveQuery.Event], to rows: [Row], after sequence: inout UInt64, label: String,
        resultsAt: (UInt64) -> [Row]? = { _ in nil }
    ) -> [Row] {
        var elements = ChangeElements()
        return apply(events, to: rows, after: &sequence, label: label, resultsAt: resultsAt, elements: &elements)
    }

    /// `apply`, counting in `elements` the moves and updates checked.
    static func apply(
        _ events: [RecordLiveQuery.Event], to rows: [Row], after sequence: inout UInt64, label: String,
        resultsAt: (UInt64) -> [Row]?, elements: inout ChangeElements
    ) -> [Row] {
        var rows = rows
        for event in events {
            switch event {
            case .change(let change):
                #expect(change.sequence > sequence, "\(label): sequence \(change.sequence) after \(sequence)")
                #expect(!change.isEmpty, "\(label): an empty change")
                sequence = change.sequence
                let previous = rows.map { QueryRow(key: $0.key, record: $0.record) }
                let next = change.apply(to: previous)
                let mismatches = elements.mismatches(
                    of: change, previous: previous,
                    next: resultsAt(change.sequence)?.map { QueryRow(key: $0.key, record: $0.record) } ?? next
                ) { Row($0) == Row($1) }
                #expect(mismatches.isEmpty, "\(label), commit \(change.sequence): \(mismatches)")
                rows = next.map(Row.init)
            case .initial:
                Issue.record("\(label): a second initial event")
            case .failed(let error):
                Issue.record("\(label): failed: \(error)")
            case .progress(let progress):
                #expect(progress >= sequence, "\(label): progress \(progress) after \(sequence)")
            }
        }
        return rows
    }

    @Test func randomRecordLiveQueriesMatchFreshRuns() throws {
        var generator = TextQueryOracleTests.Generator(random: SeededGenerator(label: "record live query oracle"))
        let container = try ModelContainer(
            for: Gadget.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let store = container.store
        let context = ModelContext(container)
        let idSpace = 200
        for id in 0..<(idSpace / 2) { context.insert(Gadget.random(id: id, using: &generator.random)) }
        try context.save()

        var queries: [(live: RecordLiveQuery, events: Events, query: Query, previous: [Row], sequence: UInt64)] = []
        for _ in 0..<OracleScale.value("RILL_RECORD_LIVE_QUERIES", default: 24) {
            let query = Self.randomQuery(&generator)
            let events = Events()
            let live = try RecordLiveQuery(query, store: store) { events.append($0) }
            let received = events.take()
            guard received.count == 1, case .initial(let rows, let sequence) = received[0] else {
                Issue.record("\(query): expected one initial event, got \(received)")
                continue
            }
            let expected = try store.run(query).map(Row.init)
            #expect(rows.map(Row.init) == expected, "initial results of \(query)")
            queries.append((live, events, query, expected, sequence))
        }

        // Results at every commit, for the resumption checks below.
        let resumed = queries.prefix(6).map(\.query)
        var history: [UInt64: [[Row]]] = [try store.head(): try resumed.map { try store.run($0).map(Row.init) }]
        var failures = 0
        var elements = ChangeElements()
        for round in 0..<OracleScale.value("RILL_RECORD_LIVE_SAVES", default: 150) {
            for _
                in 0..<(Int.random(in: 0..<4, using: &generator.random) == 0
                ? Int.random(in: 2...6, using: &generator.random) : 1)
            {
                try generator.stageRandomGadgetChange(in: context, idSpace: idSpace)
            }
            try context.save()
            try queries[0].live.catchUp()
            let head = try store.head()
            history[head] = try resumed.map { try store.run($0).map(Row.init) }
            for index in queries.indices {
                let item = queries[index]
                let label = "round \(round), \(item.query)"
                var sequence = item.sequence
                let expected = try store.run(item.query).map(Row.init)
                let applied = Self.apply(
                    item.events.take(), to: item.previous, after: &sequence, label: label,
                    resultsAt: { $0 == head ? expected : nil }, elements: &elements)
                if applied != expected || item.live.results.rows.map(Row.init) != expected {
                    failures += 1
                    Issue.record(
                        "\(label): previous + changes != a fresh run\napplied:  \(applied)\nexpected: \(expected)")
                }
                queries[index].previous = expected
                queries[index].sequence = sequence
            }
            if failures > 5 { break }
        }
        #expect(elements.changed > 0, "no update or move of a changed record was told (\(elements.checked))")

        // Resuming after an earlier commit: the results then, plus the changes told, are the
        // results now.
        let head = try store.head()
        let final = try resumed.map { try store.run($0).map(Row.init) }
        for since in history.keys.sorted().filter({ _ in Int.random(in: 0..<8, using: &generator.random) == 0 }) + [
            head
        ] {
            for (index, query) in resumed.enumerated() {
                let events = Events()
                let live = try RecordLiveQuery(query, store: store, since: since) { events.append($0) }
                var sequence = since
                let applied = Self.apply(
                    events.take(), to: history[since]![index], after: &sequence, label: "since \(since), \(query)",
                    resultsAt: { history[$0]?[index] })
                #expect(applied == final[index], "resumed after \(since): \(query)")
                #expect(live.results.rows.map(Row.init) == final[index])
            }
        }
        #expect(throws: RillError.self) { try RecordLiveQuery(resumed[0], store: store, since: head + 1) { _ in } }
    }

    @Test func aQueryThatFailsToStartLeavesTheOthersFollowing() throws {
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = ModelContext(container)
        context.insert(Counter(id: 1, value: 1))
        try context.save()
        let events = Events()
        let query = Query(entity: "Counter")
        let live = try RecordLiveQuery(query, store: container.store) { events.append($0) }
        for _ in 0..<3 {
            #expect(throws: RillError.self) { try RecordLiveQuery(query, store: container.store, since: 99) { _ in } }
        }
        context.insert(Counter(id: 2, value: 2))
        let sequence = try #require(try context.save())
        try live.catchUp()
        #expect(live.results.rows.count == 2)
        let received = events.take()
        guard case .change(let change)? = received.last else {
            Issue.record("no change after a failed start: \(received)")
            return
        }
        #expect(change.sequence == sequence)
    }

    @Test func aCommitThatChangesARecordTwiceIsAppliedInOrder() throws {
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = ModelContext(container)
        for id in 0..<10 { context.insert(Counter(id: id, value: id)) }
        try context.save()
        let store = container.store
        let query = try QueryParser.parse("Counter where value >= 5 sort by value desc limit 3")
        let events = Events()
        let live = try RecordLiveQuery(query, store: store) { events.append($0) }
        var rows = try store.run(query).map(Row.init)
        _ = events.take()
        // Saves given as JSON may change one record twice: in, then out again; new, then gone.
        for changes in [
            [
                #"{"op":"update","entity":"Counter","record":{"id":1,"value":91}}"#,
                #"{"op":"update","entity":"Counter","record":{"id":1,"value":2}}"#,
            ],
            [
                #"{"op":"insert","entity":"Counter","record":{"id":50,"value":99,"payload":""}}"#,
                #"{"op":"delete","entity":"Counter","id":50}"#,
            ],
            [
                #"{"op":"update","entity":"Counter","record":{"id":9,"value":1}}"#,
                #"{"op":"update","entity":"Counter","record":{"id":9,"value":95}}"#,
            ],
        ] {
            let prepared = try store.prepare(changes.map { try JSONChange(json: JSONReader.parse(Array($0.utf8))) })
            _ = try store.commit(prepared, author: nil)
            try live.catchUp()
            var sequence: UInt64 = 0
            rows = Self.apply(events.take(), to: rows, after: &sequence, label: "\(changes)")
            let expected = try store.run(query).map(Row.init)
            #expect(rows == expected, "\(changes)")
            #expect(live.results.rows.map(Row.init) == expected)
        }
    }
}
