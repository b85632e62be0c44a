import Foundation
import RillLocks
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// `ModelContext.deleteHistory(before:)`: the history before a token or a date is folded into
/// the log's snapshot, the models stay as they were, later history stays whole, earlier history
/// is refused by name, and this process's live queries go on through it.
@Suite struct DeleteHistoryTests {
    let directory = TemporaryDirectory()

    struct Ledger: PersistentModel, Equatable {
        var id: Int
        var balance: Int
    }

    func makeContainer(_ name: String = "store", allowsSave: Bool = true) throws -> ModelContainer {
        try ModelContainer(
            for: Ledger.self,
            configurations: ModelConfiguration(
                url: directory.url.appendingPathComponent(name), durability: .unsynced, allowsSave: allowsSave))
    }

    /// Saves `count` commits, each changing one of ten ledgers; the sequence of each.
    func save(_ count: Int, in context: ModelContext, random: inout SeededGenerator) throws -> [UInt64] {
        try (0..<count).map { _ in
            context.insert(
                Ledger(
                    id: Int.random(in: 0..<10, using: &random), balance: Int.random(in: 0...1_000_000, using: &random)))
            return try #require(try context.save())
        }
    }

    /// `count` saves of one ledger each, among ledgers 0…4 only.
    func saveAmongFirstFive(_ count: Int, in context: ModelContext, random: inout SeededGenerator) throws {
        for _ in 0..<count {
            context.insert(
                Ledger(
                    id: Int.random(in: 0..<5, using: &random), balance: Int.random(in: 0...1_000_000, using: &random)))
            try context.save()
        }
    }

    @Test func historyBeforeATokenIsDeletedAndLaterHistoryStaysWhole() throws {
        var random = SeededGenerator(label: "delete history")
        let container = try makeContainer()
        let context = container.mainContext
        let sequences = try save(20, in: context, random: &random)
        let all = FetchDescriptor<Ledger>(sortBy: [SortDescriptor(\.id)])
        let models = try context.fetch(all)
        let later = try context.fetchHistory(HistoryDescriptor(after: HistoryToken(sequence: 10)))
        let atTen = try context.fetch(all, asOf: HistoryToken(sequence: 10))

        #expect(try context.deleteHistory(before: HistoryToken(sequence: 11)) == 10)
        #expect(try context.fetch(all) == models)
        // History from the horizon on is as it was; the whole history starts after it.
        #expect(
            try context.fetchHistory(HistoryDescriptor(after: HistoryToken(sequence: 10))).map(\.sequence)
                == later.map(\.sequence))
        #expect(try context.fetchHistory(HistoryDescriptor()).map(\.sequence) == Array(sequences[10...]))
        #expect(try context.fetch(all, asOf: HistoryToken(sequence: 10)) == atTen)
        let refused = #expect(throws: RillError.self) { _ = try context.fetch(all, asOf: HistoryToken(sequence: 9)) }
        #expect(refused?.code == .historyCompacted)
        // Deleting it again deletes nothing; saves go on from the head.
        #expect(try context.deleteHistory(before: HistoryToken(sequence: 11)) == 0)
        #expect(try save(1, in: context, random: &random) == [21])
        // A token past the last commit is another store's.
        let misuse = #expect(throws: RillError.self) { try context.deleteHistory(before: HistoryToken(sequence: 23)) }
        #expect(misuse?.code == .misuse)
        // The last commit is always kept.
        #expect(try context.deleteHistory(before: context.currentHistoryToken()) == 10)
        #expect(try context.fetchHistory(HistoryDescriptor()).map(\.sequence) == [21])
        #expect(try context.fetch(all) == (try ModelContext(container).fetch(all)))
        let check = try container.store.check()
        #expect(check.isHealthy, "\(check.problems)")
    }

    @Test func historyBeforeADateIsDeletedAndTheLastCommitIsKept() throws {
        var random = SeededGenerator(label: "delete history by date")
        let context = try makeContainer().mainContext
        _ = try save(5, in: context, random: &random)
        let history = try context.fetchHistory(HistoryDescriptor())
        // Between the timestamps of commits 3 and 4 (or at 4's, when they are equal).
        let date = history[3].timestamp
        let made = history.filter { $0.timestamp < date }.count
        #expect(try context.deleteHistory(before: date) == made)
        #expect(try context.fetchHistory(HistoryDescriptor()).first?.sequence == UInt64(made + 1))
        #expect(try context.deleteHistory(before: .distantFuture) == 4 - made)
        #expect(try context.fetchHistory(HistoryDescriptor()).map(\.sequence) == [5])
        #expect(try context.deleteHistory(before: .distantPast) == 0)
    }

    @Test func aSubscriptionOrAReadOnlyContainerKeepsTheHistory() throws {
        var random = SeededGenerator(label: "delete history refused")
        let container = try makeContainer()
        let context = container.mainContext
        _ = try save(10, in: context, random: &random)
        try container.registerSubscription(named: "mirror", at: HistoryToken(sequence: 4))
        let retained = #expect(throws: RillError.self) { try context.deleteHistory(before: HistoryToken(sequence: 8)) }
        #expect(retained?.code == .historyRetained && retained?.message.contains("\"mirror\"") == true)
        #expect(try context.fetchHistory(HistoryDescriptor()).count == 10)
        #expect(try context.deleteHistory(before: HistoryToken(sequence: 5)) == 4)

        let reader = try makeContainer(allowsSave: false)
        let readOnly = #expect(throws: RillError.self) {
            try reader.mainContext.deleteHistory(before: HistoryToken(sequence: 8))
        }
        #expect(readOnly?.code == .readOnly)
        #expect(try context.fetchHistory(HistoryDescriptor()).count == 6)
    }

    /// Each save followed at once by a deletion of the history before it: the follower has not
    /// read the commit yet when the deletion asks, and the live query goes on with every change.
    @Test func liveQueriesOfTheProcessFollowThroughDeletedHistory() throws {
        var random = SeededGenerator(label: "delete history under live queries")
        let container = try makeContainer()
        let context = ModelContext(container)
        var descriptor = FetchDescriptor<Ledger>(
            predicate: #Predicate { $0.balance > 300_000 }, sortBy: [SortDescriptor(\.balance, order: .reverse)])
        descriptor.fetchLimit = 5
        let query = try LiveQuery(descriptor, in: container)
        for round in 0..<60 {
            _ = try save(Int.random(in: 1...3, using: &random), in: context, random: &random)
            try context.deleteHistory(before: context.currentHistoryToken())
            if round % 10 == 9 {
                try query.catchUp()
                let fresh = try context.fetch(descriptor)
                #expect(Array(query) == fresh, "round \(round)")
            }
        }
        try query.catchUp()
        #expect(query.error == nil)
        #expect(Array(query) == (try context.fetch(descriptor)))
        #expect(try context.fetchHistory(HistoryDescriptor()).count == 1)
    }

    /// A compaction that does not wait for this process's follower (another process's `rill
    /// compact`) may fold commits it has not read: its live queries then load again at the head,
    /// each observer told the difference in one change (applied to what it had, the results of a
    /// fresh fetch; an update only for a row whose model differs), and follow every later save.
    @Test func liveQueriesLoadAgainWhenAnotherProcessFoldsCommitsTheyHaveNotRead() throws {
        var random = SeededGenerator(label: "compaction ahead of the follower")
        let container = try makeContainer()
        let context = ModelContext(container)
        let descriptor = FetchDescriptor<Ledger>(sortBy: [SortDescriptor(\.id)])
        // A window, refilled from the records the follower has seen as commits take its rows out.
        var top = FetchDescriptor<Ledger>(sortBy: [SortDescriptor(\.balance, order: .reverse), SortDescriptor(\.id)])
        top.fetchLimit = 3
        _ = try save(3, in: context, random: &random)
        let query = try LiveQuery(descriptor, in: container)
        let window = try LiveQuery(top, in: container)
        _ = try save(20, in: context, random: &random)
        try query.catchUp()
        #expect(Array(query) == (try context.fetch(descriptor)))
        #expect(Array(window) == (try context.fetch(top)))
        // Copies kept up to date by the changes alone.
        let copies = Lock((all: Array(query), top: Array(window), updates: [Ledger.ID]()))
        let queues = (all: DispatchQueue(label: "all"), top: DispatchQueue(label: "top"))
        let observations = [
            query.observe(on: queues.all) { change in
                copies.withLock {
                    $0.all = change.apply(to: $0.all)
                    $0.updates += change.updates.map(\.element.id)
                }
            },
            window.observe(on: queues.top) { change in copies.withLock { $0.top = change.apply(to: $0.top) } },
        ]
        // Commits saved and folded while the follower is held; one model saved as it was.
        let follower = try #require(LogFollowers.running(for: container.store.fileID))
        let before = Array(query)
        try follower.holding {
            // Ledgers 0…4 change; 5…9 stay as the query holds them.
            try saveAmongFirstFive(20, in: context, random: &random)
            #expect(try container.store.compact(before: try container.store.head()).droppedCommits == 42)
        }
        try query.catchUp()
        #expect(query.error == nil && window.error == nil)
        #expect(Array(query) == (try context.fetch(descriptor)))
        #expect(Array(window) == (try context.fetch(top)))
        // The changes reach the observers' queues after the results are published.
        let deadline = Date().addingTimeInterval(10)
        while copies.withLock({ $0.all != Array(query) || $0.top != Array(window) }), Date() < deadline {
            queues.all.sync {}
            queues.top.sync {}
            Thread.sleep(forTimeInterval: 0.01)
        }
        let seen = copies.withLock { $0 }
        #expect(seen.all == Array(query))
        #expect(seen.top == Array(window))
        // An update only where the model differs from what the query held.
        let held = Dictionary(uniqueKeysWithValues: before.map { ($0.id, $0) })
        #expect(held.keys.contains { $0 >= 5 } && !seen.updates.isEmpty)
        for id in seen.updates {
            let now = try #require(Array(query).first { $0.id == id })
            #expect(held[id] != now, "ledger \(id) was reported updated unchanged")
        }

        // They, and queries made now, follow every later save.
        let next = try LiveQuery(descriptor, in: container)
        for round in 0..<40 {
            _ = try save(1, in: context, random: &random)
            try next.catchUp()
            #expect(next.error == nil && query.error == nil && window.error == nil)
            #expect(Array(next) == (try context.fetch(descriptor)), "round \(round)")
            #expect(Array(query) == (try context.fetch(descriptor)), "round \(round)")
            #expect(Array(window) == (try context.fetch(top)), "round \(round)")
        }
        withExtendedLifetime(observations) {}
    }

    /// The same for text queries' live queries (`rill watch`, the daemon's subscribers): sharers
    /// and a query of its own are told one change to the results at the head, and follow on; the
    /// events applied to the first results give a fresh run's rows, and no event is a failure.
    @Test func textLiveQueriesLoadAgainWhenAnotherProcessFoldsCommitsTheyHaveNotRead() throws {
        var random = SeededGenerator(label: "text queries after a compaction ahead of the follower")
        let container = try makeContainer()
        let store = container.store
        let context = ModelContext(container)
        _ = try save(8, in: context, random: &random)
        let queries = [
            try QueryParser.parse("Ledger sort by id"),
            try QueryParser.parse("Ledger where balance > 500000 sort by balance desc limit 3"),
        ]
        var followed: [(live: RecordLiveQuery, events: RecordLiveQueryTests.Events, query: Query)] = []
        for query in queries {
            for sharing in [true, true, false] {
                let events = RecordLiveQueryTests.Events()
                followed.append(
                    (try RecordLiveQuery(query, store: store, sharing: sharing) { events.append($0) }, events, query))
            }
        }
        let follower = try #require(LogFollowers.running(for: store.fileID))
        try follower.holding {
            try saveAmongFirstFive(10, in: context, random: &random)
            _ = try store.compact(before: try store.head())
        }
        for round in 0..<10 {
            if round > 0 { _ = try save(1, in: context, random: &random) }
            for (live, events, query) in followed {
                try live.catchUp()
                let deadline = Date().addingTimeInterval(10)
                var rows: [QueryRow] = []
                var failed = false
                repeat {
                    rows = []
                    failed = false
                    for event in events.received.withLock({ $0 }) {
                        switch event {
                        case .initial(let initial, _): rows = initial
                        case .change(let change): change.apply(to: &rows)
                        case .failed: failed = true
                        case .progress: break
                        }
                    }
                    if rows.map(\.key) == (try store.run(query)).map(\.key) { break }
                    Thread.sleep(forTimeInterval: 0.01)
                } while Date() < deadline
                #expect(!failed, "\(query), round \(round)")
                let fresh = try store.run(query)
                #expect(rows.map(\.key) == fresh.map(\.key), "\(query), round \(round)")
                #expect(rows.map(\.record) == fresh.map(\.record), "\(query), round \(round)")
            }
        }
    }
}
