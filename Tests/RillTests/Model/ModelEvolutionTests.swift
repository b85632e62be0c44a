import Dispatch
import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// A store written by version 1 of a model, read by version 2 — a field renamed, one added with a
/// default, one added optional, one removed — through its `evolution`: fetches, predicates and
/// sorts on the changed fields, live queries (also while a version-1 writer goes on), as-of
/// queries and history all see every record as version 2 reads it.
@Suite struct ModelEvolutionTests {
    let directory = TemporaryDirectory()

    struct BookV1: PersistentModel, Equatable {
        static let entityName = "Book"
        var id: String
        var name: String
        var legacy: Int
    }

    struct BookV2: PersistentModel, Equatable {
        static let entityName = "Book"
        var id: String
        var title: String
        var rank: Int = 7
        var note: String?

        static let evolution = ModelEvolution<BookV2>(.added(\.rank, default: 7), .renamed(\.title, from: "name"))
    }

    /// Version 2 without its evolution: records of version 1 lack `title` and `rank`.
    struct BookV2Undeclared: PersistentModel, Equatable {
        static let entityName = "Book"
        var id: String
        var title: String
        var rank: Int = 7
    }

    static func v2(_ book: BookV1) -> BookV2 { BookV2(id: book.id, title: book.name, rank: 7, note: nil) }

    final class Received: @unchecked Sendable {
        // Written on the observer's queue, read after draining it.
        var changes: [ResultsChange<BookV2>] = []
    }

    @Test func aStoreOfVersionOneReadsAsVersionTwoEverywhere() throws {
        var random = SeededGenerator(label: "model evolution")
        let url = directory.url.appendingPathComponent("store")
        var books: [String: BookV1] = [:]
        var states: [[String: BookV1]] = [[:]]
        do {
            let container = try ModelContainer(for: BookV1.self, configurations: ModelConfiguration(url: url))
            for _ in 0..<60 {
                let id = "b\(Int.random(in: 0..<20, using: &random))"
                if let old = books[id], Bool.random(using: &random) {
                    container.mainContext.delete(old)
                    books[id] = nil
                } else {
                    let book = BookV1(id: id, name: "n\(Int.random(in: 0..<9, using: &random))", legacy: 1)
                    container.mainContext.insert(book)
                    books[id] = book
                }
                if try container.mainContext.save() != nil { states.append(books) }
            }
        }
        let container = try ModelContainer(for: BookV2.self, configurations: ModelConfiguration(url: url))
        let context = container.mainContext
        func expected(_ state: [String: BookV1], _ include: (BookV2) -> Bool = { _ in true }) -> [BookV2] {
            state.values.map(Self.v2).filter(include).sorted { ($0.title, $0.id) < ($1.title, $1.id) }
        }
        let sorted = [SortDescriptor(\BookV2.title), SortDescriptor(\BookV2.id)]
        #expect(try context.fetch(FetchDescriptor<BookV2>(sortBy: sorted)) == expected(books))
        // Predicates and sorts on the renamed and the added fields.
        let renamed = FetchDescriptor<BookV2>(predicate: #Predicate { $0.title == "n3" }, sortBy: sorted)
        #expect(try context.fetch(renamed) == expected(books) { $0.title == "n3" })
        let added = FetchDescriptor<BookV2>(predicate: #Predicate { $0.rank == 7 && $0.note == nil }, sortBy: sorted)
        #expect(try context.fetch(added).count == books.count)
        var byRank = FetchDescriptor<BookV2>(sortBy: [SortDescriptor(\.rank, order: .reverse), SortDescriptor(\.title)])
        byRank.fetchLimit = 3
        context.insert(BookV2(id: "top", title: "zz", rank: 99, note: "new"))
        try context.save()
        #expect(try context.fetch(byRank).first?.id == "top")

        // As of every commit of version 1, and their history, read as version 2.
        for sequence in 0..<states.count {
            #expect(
                try context.fetch(
                    FetchDescriptor<BookV2>(sortBy: sorted), asOf: HistoryToken(sequence: UInt64(sequence)))
                    == expected(states[sequence]), "as of \(sequence)")
        }
        for transaction in try context.fetchHistory(
            HistoryDescriptor(through: HistoryToken(sequence: UInt64(states.count - 1))))
        {
            for change in transaction.changes {
                let id = try #require(change.identifier(as: String.self))
                let before = states[Int(transaction.sequence) - 1][id].map(Self.v2)
                let after = states[Int(transaction.sequence)][id].map(Self.v2)
                #expect(try change.before(as: BookV2.self) == before && change.after(as: BookV2.self) == after)
            }
        }

        // A live query of version 2 follows a version-1 writer and never stops.
        let live = try LiveQuery(renamed, in: container)
        let received = Received()
        let queue = DispatchQueue(label: "evolution")
        let observation = live.observe(on: queue) { received.changes.append($0) }
        var previous = Array(live)
        let writer = try ModelContainer(for: BookV1.self, configurations: ModelConfiguration(url: url))
        for round in 0..<20 {
            writer.mainContext.insert(BookV1(id: "w\(round % 5)", name: ["n3", "n4"][round % 2], legacy: round))
            try writer.mainContext.save()
        }
        try live.catchUp()
        queue.sync {}
        for change in received.changes { previous = change.apply(to: previous) }
        #expect(live.error == nil)
        #expect(previous == (try context.fetch(renamed)))
        #expect(Array(live) == previous)
        observation.cancel()

        // rill check holds every record to the schema: the evolution's defaults and renames count.
        let healthy = try container.store.check()
        #expect(healthy.isHealthy, "\(healthy.problems)")
        #expect(try container.store.schema(of: "Book")?.renamed == ["title": "name"])
        #expect(try container.store.schema(of: "Book")?.defaulted == ["rank"])

        // Without the evolution, the error says what to do, and rill check names the records.
        let undeclared = try ModelContainer(for: BookV2Undeclared.self, configurations: ModelConfiguration(url: url))
        let report = try undeclared.store.check()
        #expect(!report.isHealthy)
        #expect(
            report.problems.contains { $0.contains("does not read as schema version") && $0.contains("lacks `title`") },
            "\(report.problems)")
        let error = #expect(throws: RillError.self) {
            _ = try undeclared.mainContext.fetch(FetchDescriptor<BookV2Undeclared>())
        }
        #expect(
            error?.code == .decodingFailed && error?.message.contains("static let evolution") == true,
            "\(String(describing: error))")
    }

    @Test func rillCheckNamesAValueOfAnotherKindThanTheSchemas() throws {
        let url = directory.url.appendingPathComponent("store")
        let container = try ModelContainer(for: BookV2.self, configurations: ModelConfiguration(url: url))
        container.mainContext.insert(BookV2(id: "a", title: "fine"))
        try container.mainContext.save()
        #expect(try container.store.check().isHealthy)
        // A record another writer stored with `rank` as a string.
        let store = container.store
        let entity = try #require(try store.entity(named: "Book"))
        let record = RecordValue.map([
            RecordField(name: "id", value: .string("b")), RecordField(name: "title", value: .string("odd")),
            RecordField(name: "rank", value: .string("high")),
        ])
        _ = try store.commit(
            [PreparedChange(entity: entity, key: "b".storageKey, operation: .upsert(record.recordBytes()))], author: nil
        )
        let problems = try store.check().problems
        #expect(problems == ["Book b does not read as schema version 1: `rank` holds a string, not int"], "\(problems)")
    }

    final class Told: @unchecked Sendable {
        // Written on the observer's queue, read after draining it.
        var changes: [ResultsChange<BookV2Undeclared>] = []
    }

    @Test func aRecordALiveQueryCannotReadSuspendsItUntilTheStoreReadsAgain() throws {
        let url = directory.url.appendingPathComponent("store")
        let container = try ModelContainer(for: BookV2Undeclared.self, configurations: ModelConfiguration(url: url))
        let context = container.mainContext
        for number in 0..<5 { context.insert(BookV2Undeclared(id: "c\(number)", title: "t\(number)", rank: number)) }
        try context.save()
        let descriptor = FetchDescriptor<BookV2Undeclared>(sortBy: [SortDescriptor(\.title)])
        let live = try LiveQuery(descriptor, in: container)
        let told = Told()
        let queue = DispatchQueue(label: "suspended")
        let observation = live.observe(on: queue) { told.changes.append($0) }
        var results = Array(live)
        func drain() throws {
            try live.catchUp()
            queue.sync {}
            for change in told.changes { results = change.apply(to: results) }
            told.changes.removeAll()
        }
        // An older writer stores a record this version cannot read: the query is suspended.
        let old = try ModelContainer(for: BookV1.self, configurations: ModelConfiguration(url: url))
        old.mainContext.insert(BookV1(id: "old", name: "n", legacy: 1))
        try old.mainContext.save()
        try drain()
        #expect(live.error?.code == .decodingFailed, "\(String(describing: live.error))")
        #expect(results.map(\.id) == ["c0", "c1", "c2", "c3", "c4"], "the last results are kept")
        // Commits go on meanwhile; while the record is there, the query stays suspended.
        context.insert(BookV2Undeclared(id: "c9", title: "a first", rank: 9))
        try context.save()
        try drain()
        #expect(live.error != nil)
        // The record saved by the current version: the query reads again, and is told of one
        // change from its last results to the current ones, then follows as before.
        context.insert(BookV2Undeclared(id: "old", title: "z last", rank: 0))
        try context.save()
        try drain()
        #expect(live.error == nil)
        #expect(results == (try context.fetch(descriptor)))
        #expect(Array(live) == results)
        context.delete(BookV2Undeclared(id: "c0", title: "t0"))
        try context.save()
        try drain()
        #expect(results == (try context.fetch(descriptor)))
        observation.cancel()
    }

    struct PlaceV1: PersistentModel, Equatable {
        static let entityName = "Place"
        struct Address: Codable, Sendable, Equatable { var town: String }
        var id: Int
        var address: Address
    }

    struct PlaceV2: PersistentModel, Equatable {
        static let entityName = "Place"
        struct Address: Codable, Sendable, Equatable {
            var city: String
            var zip: String = "00000"
        }
        var id: Int
        var address: Address

        static let evolution = ModelEvolution<PlaceV2>(
            .renamed(\.address.city, from: "town"), .added(\.address.zip, default: "00000"))
    }

    @Test func evolutionStepsReachIntoNestedStructs() throws {
        var random = SeededGenerator(label: "nested evolution")
        let url = directory.url.appendingPathComponent("store")
        var towns: [Int: String] = [:]
        do {
            let container = try ModelContainer(for: PlaceV1.self, configurations: ModelConfiguration(url: url))
            for id in 0..<30 {
                let town = ["Lyon", "Oslo", "Graz"].randomElement(using: &random)!
                container.mainContext.insert(PlaceV1(id: id, address: .init(town: town)))
                towns[id] = town
            }
            try container.mainContext.save()
        }
        let container = try ModelContainer(for: PlaceV2.self, configurations: ModelConfiguration(url: url))
        let context = container.mainContext
        context.insert(PlaceV2(id: 100, address: .init(city: "Oslo", zip: "0150")))
        try context.save()
        towns[100] = "Oslo"
        let all = try context.fetch(FetchDescriptor<PlaceV2>(sortBy: [SortDescriptor(\.id)]))
        #expect(all.map(\.address.city) == towns.sorted { $0.key < $1.key }.map(\.value))
        #expect(all.filter { $0.id != 100 }.allSatisfy { $0.address.zip == "00000" })
        let oslo = FetchDescriptor<PlaceV2>(
            predicate: #Predicate { $0.address.city == "Oslo" }, sortBy: [SortDescriptor(\.id)])
        let typed = try context.fetch(oslo).map(\.id)
        #expect(typed == towns.filter { $0.value == "Oslo" }.keys.sorted())
        // Text queries and the schema-less read see the nested fields as version 2 does.
        let store = container.store
        let rows = try store.run(try QueryParser.parse("Place where address.city == \"Oslo\" sort by id"))
        #expect(rows.map { QueryEvaluator.read(["id"], from: $0.record) } == typed.map { .int(Int64($0)) })
        let zips = try store.run(try QueryParser.parse("Place where address.zip == \"00000\""))
        #expect(zips.count == 30)
        let entity = try #require(try store.entity(named: "Place"))
        let record = try #require(try store.currentRecordValue(of: entity, key: 1.storageKey))
        #expect(QueryEvaluator.read(["address", "city"], from: record) == .string(towns[1]!))
        #expect(QueryEvaluator.read(["address", "town"], from: record) == .null)
        let report = try store.check()
        #expect(report.isHealthy, "\(report.problems)")
    }

    struct Computed: PersistentModel {
        var id: Int
        var depth: Int { 1 }
        static let evolution = ModelEvolution<Computed>(.added(\.depth, default: 1))
    }

    @Test func anEvolutionStepOnAComputedPropertyIsRefusedByTheContainer() throws {
        let error = #expect(throws: RillError.self) {
            _ = try ModelContainer(
                for: Computed.self,
                configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        }
        #expect(error?.code == .invalidConfiguration && error?.message.contains("Computed") == true)
    }

    struct ItemV1: PersistentModel {
        static let entityName = "Item"
        var id: Int
        var title: String
    }

    /// Version 2 stores its renamed and its added field under coding keys holding a dot and a comma.
    struct ItemV2: PersistentModel, Equatable {
        static let entityName = "Item"
        var id: Int
        var name: String
        var rank: Int
        enum CodingKeys: String, CodingKey {
            case id
            case name = "n.m"
            case rank = "r,k"
        }
        static let evolution = ModelEvolution<ItemV2>(.renamed(\.name, from: "title"), .added(\.rank, default: 5))
    }

    @Test func evolutionStepsOnKeysWithDotsAndCommasNameOneField() throws {
        let url = directory.url.appendingPathComponent("store")
        do {
            let context = try ModelContainer(for: ItemV1.self, configurations: ModelConfiguration(url: url)).mainContext
            for id in 0..<4 { context.insert(ItemV1(id: id, title: "t\(id)")) }
            try context.save()
        }
        let container = try ModelContainer(for: ItemV2.self, configurations: ModelConfiguration(url: url))
        let items = try container.mainContext.fetch(FetchDescriptor<ItemV2>(sortBy: [SortDescriptor(\.id)]))
        #expect(items == (0..<4).map { ItemV2(id: $0, name: "t\($0)", rank: 5) })
        let rows = try container.store.run(try QueryParser.parse("Item where `n.m` == \"t2\" and `r,k` == 5"))
        #expect(rows.map { QueryEvaluator.read(["id"], from: $0.record) } == [.int(2)])
        let report = try container.store.check()
        #expect(report.isHealthy, "\(report.problems)")
    }
}
