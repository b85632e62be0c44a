import Foundation
import RillLocks
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Live text queries of one query share its maintained result: each sharer is told exactly what
/// a query of its own (`sharing: false`) started at the same moment is told — its initial results
/// or its resumption, then every change in order, progress when asked — while others join, resume
/// and leave around it; and the last one out stops the shared query.
@Suite struct SharedRecordLiveQueryTests {
    let directory = TemporaryDirectory()

    typealias Events = RecordLiveQueryTests.Events

    /// A sharer and a query of its own, started together, and what each was told.
    struct Pair {
        var shared: RecordLiveQuery
        var sharedEvents: Events
        var own: RecordLiveQuery
        var ownEvents: Events
        var label: String
    }

    /// An event as text, every offset and record in it.
    static func describe(_ event: RecordLiveQuery.Event) -> String {
        func rows(_ rows: [QueryRow]) -> String { rows.map { $0.record.jsonString() }.joined(separator: ",") }
        switch event {
        case .initial(let results, let sequence):
            return "initial@\(sequence)[\(rows(results))]"
        case .change(let change):
            var text = "change@\(change.sequence)"
            text +=
                " -" + change.removals.map { "\($0.offset):\($0.element.record.jsonString())" }.joined(separator: ",")
            text +=
                " +" + change.insertions.map { "\($0.offset):\($0.element.record.jsonString())" }.joined(separator: ",")
            text +=
                " ~"
                + change.moves.map {
                    "\($0.from)>\($0.to):\($0.oldElement.record.jsonString())>\($0.element.record.jsonString())"
                }.joined(separator: ",")
            text +=
                " ="
                + change.updates.map {
                    "\($0.offset):\($0.oldElement.record.jsonString())>\($0.element.record.jsonString())"
                }.joined(separator: ",")
            return text
        case .failed(let error):
            return "failed \(error)"
        case .progress(let sequence):
            return "progress@\(sequence)"
        }
    }

    @Test func sharersAreToldWhatQueriesOfTheirOwnAreTold() throws {
        var generator = TextQueryOracleTests.Generator(random: SeededGenerator(label: "shared record live queries"))
        let container = try ModelContainer(
            for: Gadget.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let store = container.store
        let context = ModelContext(container)
        let idSpace = 150
        for id in 0..<(idSpace / 2) { context.insert(Gadget.random(id: id, using: &generator.random)) }
        try context.save()
        // Three random queries, which may match little (a narrow predicate, a limit of 0), and one
        // of every gadget, which each save changes: the changes told are many whatever the seed.
        var everyGadget = Query(entity: "Gadget")
        everyGadget.sort = [QuerySortKey(path: generator.pick(RecordLiveQueryTests.sortPaths), ascending: false)]
        let queries = (0..<3).map { _ in RecordLiveQueryTests.randomQuery(&generator) } + [everyGadget]
        var heads = [try store.head()]

        func start(_ query: Query, since: UInt64?, reporting: Bool, label: String) throws -> Pair {
            let sharedEvents = Events()
            let ownEvents = Events()
            let shared = try RecordLiveQuery(query, store: store, since: since, reportingResultsAtSince: reporting) {
                sharedEvents.append($0)
            }
            let own = try RecordLiveQuery(
                query, store: store, since: since, reportingResultsAtSince: reporting, sharing: false
            ) { ownEvents.append($0) }
            return Pair(shared: shared, sharedEvents: sharedEvents, own: own, ownEvents: ownEvents, label: label)
        }

        var pairs: [Pair] = []
        for (index, query) in queries.enumerated() {
            for copy in 0..<2 {
                pairs.append(try start(query, since: nil, reporting: false, label: "q\(index)#\(copy)"))
            }
        }
        var compared = 0
        var changes = 0
        for round in 0..<OracleScale.value("RILL_SHARED_LIVE_ROUNDS", default: 80) {
            for _ in 0..<Int.random(in: 1...3, using: &generator.random) {
                try generator.stageRandomGadgetChange(in: context, idSpace: idSpace)
            }
            if try context.save() != nil { heads.append(try store.head()) }
            // Sharers join (fresh, or resuming after an earlier commit) and leave meanwhile.
            switch Int.random(in: 0..<6, using: &generator.random) {
            case 0, 1:
                let index = Int.random(in: 0..<queries.count, using: &generator.random)
                let since = Bool.random(using: &generator.random) ? generator.pick(heads) : nil
                pairs.append(
                    try start(
                        queries[index], since: since, reporting: Bool.random(using: &generator.random),
                        label: "q\(index) from round \(round)\(since.map { " since \($0)" } ?? "")"))
            case 2 where pairs.count > 1:
                pairs.remove(at: Int.random(in: 0..<pairs.count, using: &generator.random))
            case 3:
                for pair in pairs where Bool.random(using: &generator.random) {
                    pair.shared.reportProgress()
                    pair.own.reportProgress()
                }
            default: break
            }
            for pair in pairs { try pair.shared.catchUp() }
            for pair in pairs {
                let told = pair.sharedEvents.take().map(Self.describe)
                let alone = pair.ownEvents.take().map(Self.describe)
                #expect(told == alone, "round \(round), \(pair.label): shared\n\(told)\nalone\n\(alone)")
                #expect(
                    pair.shared.results.rows.map(RecordLiveQueryTests.Row.init)
                        == (try store.run(pair.shared.query).map(RecordLiveQueryTests.Row.init)),
                    "round \(round), \(pair.label): results")
                compared += told.count
                changes += told.filter { $0.hasPrefix("change") }.count
            }
            // Every sharer of a query follows one result; a query of its own shares with none.
            for pair in pairs {
                for other in pairs where other.shared.query == pair.shared.query {
                    #expect(pair.shared.sharesResult(with: other.shared), "round \(round), \(pair.label)")
                }
                #expect(!pair.own.sharesResult(with: pair.shared))
            }
        }
        #expect(changes > 50, "too few changes told (\(changes) of \(compared) events)")
    }

    @Test func theLastSharerOutStopsTheSharedQuery() throws {
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = ModelContext(container)
        for id in 0..<10 { context.insert(Counter(id: id, value: id)) }
        try context.save()
        let store = container.store
        let follower = try LogFollowers.retain(for: store)
        defer { LogFollowers.release(follower) }
        func sharedCount() throws -> Int {
            let count = Lock(0)
            try follower.perform { _, _ in
                count.withLock { $0 = follower.sharedRecordQueries.count }
                return nil
            }
            return count.withLock { $0 }
        }
        let query = try QueryParser.parse("Counter where value >= 5 sort by value limit 3")
        let other = try QueryParser.parse("Counter where value < 5")
        var sharers: [(RecordLiveQuery, Events)] = try (0..<3).map { _ in
            let events = Events()
            return (try RecordLiveQuery(query, store: store) { events.append($0) }, events)
        }
        let keeper = try RecordLiveQuery(other, store: store) { _ in }
        #expect(try sharedCount() == 2)
        sharers.removeFirst(2)
        #expect(try sharedCount() == 2)
        context.insert(Counter(id: 20, value: 6))
        let sequence = try #require(try context.save())
        try sharers[0].0.catchUp()
        let told = sharers[0].1.take().map(Self.describe)
        #expect(told.count == 2 && told[1].hasPrefix("change@\(sequence)"), "\(told)")
        #expect(
            sharers[0].0.results.rows.map(RecordLiveQueryTests.Row.init)
                == (try store.run(query).map(RecordLiveQueryTests.Row.init)))
        sharers.removeAll()
        #expect(try sharedCount() == 1)
        // A new sharer starts a shared query anew, from the current results.
        let events = Events()
        let again = try RecordLiveQuery(query, store: store) { events.append($0) }
        #expect(try sharedCount() == 2)
        guard case .initial(let rows, _)? = events.take().first else {
            Issue.record("no initial results")
            return
        }
        #expect(rows.map(RecordLiveQueryTests.Row.init) == (try store.run(query).map(RecordLiveQueryTests.Row.init)))
        withExtendedLifetime((keeper, again)) {}
    }
}
