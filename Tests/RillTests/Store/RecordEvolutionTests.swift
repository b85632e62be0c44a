import Foundation
import RillLocks
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// The readers without model types — text queries, text live queries, replays, as-of queries and
/// `rill get`'s read — see a record of an earlier version of its entity as the current schema
/// does: a renamed field under its new name, an added one with its default. Each is compared with
/// the typed fetch of the same query (the model's own evolution is the oracle).
@Suite struct RecordEvolutionTests {
    let directory = TemporaryDirectory()

    struct BookV1: PersistentModel, Equatable {
        static let entityName = "Book"
        var id: String
        var name: String
        var shelf: Int
        var legacy: Int
    }

    struct BookV2: PersistentModel, Equatable {
        static let entityName = "Book"
        var id: String
        var title: String
        var shelf: Int
        var rank: Int = 7
        var note: String?

        static let evolution = ModelEvolution<BookV2>(.added(\.rank, default: 7), .renamed(\.title, from: "name"))
        static var indexes: [ModelIndex<BookV2>] { [ModelIndex(\.title), ModelIndex(\.rank)] }
    }

    /// What a row shows of a book, schema-less or typed.
    struct Shown: Equatable, CustomStringConvertible {
        var id: String
        var title: String?
        var rank: Int?
        var shelf: Int?

        init(_ record: RecordValue) {
            func read(_ name: String) -> RecordValue { QueryEvaluator.read([name], from: record) }
            id = if case .string(let text) = read("id") { text } else { "?" }
            title = if case .string(let text) = read("title") { text } else { nil }
            rank = if case .int(let number) = read("rank") { Int(number) } else { nil }
            shelf = if case .int(let number) = read("shelf") { Int(number) } else { nil }
        }

        init(_ book: BookV2) {
            (id, title, rank, shelf) = (book.id, book.title, book.rank, book.shelf)
        }

        var description: String { "\(id):\(title ?? "-"):\(rank.map(String.init) ?? "-")" }
    }

    /// Text queries and the typed descriptors that ask the same.
    static let pairs: [(text: String, typed: FetchDescriptor<BookV2>)] = [
        (
            "Book where title == \"n3\" sort by id",
            FetchDescriptor(predicate: #Predicate { $0.title == "n3" }, sortBy: [SortDescriptor(\.id)])
        ),
        (
            "Book where rank == 7 and shelf < 3 sort by title, id",
            FetchDescriptor(
                predicate: #Predicate { $0.rank == 7 && $0.shelf < 3 },
                sortBy: [SortDescriptor(\.title), SortDescriptor(\.id)])
        ),
        (
            "Book sort by rank desc, title, id limit 5",
            {
                var descriptor = FetchDescriptor<BookV2>(
                    sortBy: [SortDescriptor(\.rank, order: .reverse), SortDescriptor(\.title), SortDescriptor(\.id)])
                descriptor.fetchLimit = 5
                return descriptor
            }()
        ),
        (
            "Book where title >= \"n5\" sort by title desc, id limit 4 offset 1",
            {
                var descriptor = FetchDescriptor<BookV2>(
                    predicate: #Predicate { $0.title >= "n5" },
                    sortBy: [SortDescriptor(\.title, order: .reverse), SortDescriptor(\.id)])
                descriptor.fetchLimit = 4
                descriptor.fetchOffset = 1
                return descriptor
            }()
        ),
        (
            "Book where shelf == 1 sort by id",
            FetchDescriptor(predicate: #Predicate { $0.shelf == 1 }, sortBy: [SortDescriptor(\.id)])
        ),
    ]

    final class Events: @unchecked Sendable {
        // Appended on the follower's thread, taken on the test's.
        private let events = Lock<[RecordLiveQuery.Event]>([])
        func append(_ event: RecordLiveQuery.Event) { events.withLock { $0.append(event) } }
        func take() -> [RecordLiveQuery.Event] {
            events.withLock { events in
                defer { events = [] }; return events
            }
        }
    }

    /// Random version-1 saves: inserts, renames of the title, deletes.
    static func writeVersionOne(
        _ container: ModelContainer, rounds: Int, ids: Range<Int>, random: inout SeededGenerator
    ) throws {
        let context = container.mainContext
        for _ in 0..<rounds {
            let id = "b\(Int.random(in: ids, using: &random))"
            if Int.random(in: 0..<4, using: &random) == 0 {
                context.delete(BookV1(id: id, name: "", shelf: 0, legacy: 0))
            } else {
                context.insert(
                    BookV1(
                        id: id, name: "n\(Int.random(in: 0..<9, using: &random))",
                        shelf: Int.random(in: 0..<5, using: &random), legacy: 1))
            }
            try context.save()
        }
    }

    @Test func textReadsSeeRecordsOfVersionOneAsVersionTwoDoes() throws {
        var random = SeededGenerator(label: "record evolution")
        let url = directory.url.appendingPathComponent("store")
        do {
            let container = try ModelContainer(for: BookV1.self, configurations: ModelConfiguration(url: url))
            try Self.writeVersionOne(container, rounds: 80, ids: 0..<30, random: &random)
        }
        let versionOneHead = try ModelContainer(for: BookV1.self, configurations: ModelConfiguration(url: url))
            .lastSequence()
        let container = try ModelContainer(for: BookV2.self, configurations: ModelConfiguration(url: url))
        let store = container.store
        let context = container.mainContext
        // Some records of version 2 beside those of version 1.
        for number in 0..<6 {
            context.insert(BookV2(id: "v\(number)", title: "n\(number)", shelf: number % 3, rank: number, note: "new"))
        }
        try context.save()
        #expect(try store.schema(of: "Book")?.defaults == ["rank": .int(7)])

        func compare(_ label: String) throws {
            for pair in Self.pairs {
                let query = try QueryParser.parse(pair.text)
                let typed = try context.fetch(pair.typed).map(Shown.init)
                #expect(try store.run(query).map { Shown($0.record) } == typed, "\(label): \(pair.text)")
                #expect(
                    try store.run(query, forceScan: true).map { Shown($0.record) } == typed,
                    "\(label): scan \(pair.text)")
            }
        }
        try compare("after opening version 2")

        // As of each commit of version 1, text queries read as the typed as-of fetches.
        for sequence in stride(from: 0, through: versionOneHead, by: 7) {
            for pair in Self.pairs {
                let query = try QueryParser.parse(pair.text)
                let typed = try context.fetch(pair.typed, asOf: HistoryToken(sequence: sequence)).map(Shown.init)
                #expect(
                    try store.run(query, asOf: .sequence(sequence)).rows.map { Shown($0.record) } == typed,
                    "as of \(sequence): \(pair.text)")
            }
        }

        // A replay over the commits of version 1 goes through the same results.
        for pair in Self.pairs {
            let query = try QueryParser.parse(pair.text)
            let replay = try RecordReplay(query, store: store, from: 0, to: versionOneHead)
            var rows = replay.initial
            for change in replay.changes { change.apply(to: &rows) }
            let typed = try context.fetch(pair.typed, asOf: HistoryToken(sequence: versionOneHead)).map(Shown.init)
            #expect(rows.map { Shown($0.record) } == typed, "replay of \(pair.text)")
        }

        // The read `rill get` prints: the evolved record; the log keeps what was written.
        let entity = try #require(try store.entity(named: "Book"))
        for book in try context.fetch(FetchDescriptor<BookV2>()) {
            let record = try #require(try store.currentRecordValue(of: entity, key: book.id.storageKey))
            #expect(Shown(record) == Shown(book))
        }
        let written = try store.entries(after: 0, limit: 1)[0].changes[0]
        let logged = try LogEntry.recordValue(try #require(written.record))
        #expect(QueryEvaluator.read(["name"], from: logged) != .null)
        #expect(QueryEvaluator.read(["title"], from: logged) == .null)

        // Text live queries follow a version-1 writer beside version 2, and never fail.
        var followed:
            [(live: RecordLiveQuery, events: Events, query: Query, rows: [QueryRow], typed: FetchDescriptor<BookV2>)] =
                []
        for pair in Self.pairs {
            let query = try QueryParser.parse(pair.text)
            let events = Events()
            let live = try RecordLiveQuery(query, store: store) { events.append($0) }
            guard case .initial(let rows, _)? = events.take().first else {
                Issue.record("no initial results for \(pair.text)")
                continue
            }
            followed.append((live, events, query, rows, pair.typed))
        }
        let writer = try ModelContainer(for: BookV1.self, configurations: ModelConfiguration(url: url))
        for round in 0..<30 {
            if round % 3 == 2 {
                context.insert(BookV2(id: "b\(round)", title: "n\(round % 9)", shelf: round % 5, rank: round))
                try context.save()
            } else {
                try Self.writeVersionOne(writer, rounds: 1, ids: 0..<30, random: &random)
            }
            try followed.first?.live.catchUp()
            for index in followed.indices {
                for event in followed[index].events.take() {
                    switch event {
                    case .change(let change): change.apply(to: &followed[index].rows)
                    case .failed(let error): Issue.record("\(followed[index].query): \(error)")
                    default: continue
                    }
                }
                let typed = try context.fetch(followed[index].typed).map(Shown.init)
                #expect(
                    followed[index].rows.map { Shown($0.record) } == typed, "round \(round): \(followed[index].query)")
            }
        }
        try compare("after the version-1 writer")
        withExtendedLifetime(followed) {}
    }

    @Test func aReaderOpenedBeforeTheNewVersionRegisteredReadsItsRenamedFields() throws {
        var random = SeededGenerator(label: "record evolution, earlier reader")
        let url = directory.url.appendingPathComponent("store")
        let writer = try ModelContainer(for: BookV1.self, configurations: ModelConfiguration(url: url))
        try Self.writeVersionOne(writer, rounds: 40, ids: 0..<20, random: &random)
        // A reader (a daemon, say) that learned the entity's fields from version 1.
        let reader = try Store(directory: url.path, options: StoreOptions(readOnly: true), create: false)
        _ = try reader.run(try QueryParser.parse("Book where name == \"n1\""))
        let container = try ModelContainer(for: BookV2.self, configurations: ModelConfiguration(url: url))
        let typed = try container.mainContext.fetch(
            FetchDescriptor<BookV2>(predicate: #Predicate { $0.title == "n1" }, sortBy: [SortDescriptor(\.id)]))
        let rows = try reader.run(try QueryParser.parse("Book where title == \"n1\" sort by id"))
        #expect(rows.map { Shown($0.record) } == typed.map(Shown.init))
    }
}
