import Foundation
import RillTestSupport
import RillWorkloads
import Synchronization
import Testing

@testable import Rill

/// Deep and shallow live queries of a family: after each random save, the deep query's change
/// applied to its previous results equals a fresh deep fetch, and the shallow one's equals a fresh
/// fetch of its kind. And a record naming a kind the family does not list cannot crash a reader.
@Suite struct FamilyLiveQueryTests {
    let directory = TemporaryDirectory()

    private func open() throws -> ModelContainer {
        try ModelContainer(
            for: Cake.self, Drink.self, Soup.self,
            configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
    }

    @Test func deepChangesAppliedToPreviousResultsEqualFreshFetches() async throws {
        var random = SeededGenerator(label: "family live oracle")
        let container = try open()
        let context = ModelContext(container)
        let records = 150
        for id in 0..<records { context.insert(Dishes.random(id: id, using: &random)) }
        try context.save()

        for query in 0..<4 {
            let deep = ModelFamilyTests.randomDeepCase(&random)
            let sort = ModelFamilyTests.deepSorts.randomElement(using: &random)!
            var descriptor = FamilyDescriptor<any Dish>(predicate: deep.predicate, sortBy: sort.descriptors)
            if Bool.random(using: &random) { descriptor.fetchLimit = Int.random(in: 1...25, using: &random) }
            if Bool.random(using: &random) { descriptor.fetchOffset = Int.random(in: 0...5, using: &random) }
            let live = try FamilyLiveQuery(descriptor, in: container)
            let cakes = try LiveQuery(
                FetchDescriptor<Cake>(predicate: #Predicate { $0.minutes > 40 }, sortBy: [SortDescriptor(\.minutes)]),
                in: container)
            // Shallow with a predicate that is not translated: the kind's test still comes first.
            let named = try LiveQuery(
                FetchDescriptor<Drink>(predicate: #Predicate { $0.summary == "Tea" || $0.rating > 6 }), in: container)
            var changes = live.changes.makeAsyncIterator()
            var previous = live.results
            let label = "query \(query): \(deep.text), sort \(sort.text)"
            #expect(Self.same(previous, try context.fetch(descriptor)), "\(label): first results")
            var checked = 0
            for step in 0..<40 {
                for _ in 0..<Int.random(in: 1...5, using: &random) {
                    let id = Int.random(in: 0..<(records + 10), using: &random)
                    if Int.random(in: 0..<4, using: &random) == 0 {
                        context.delete(Dishes.random(id: id, using: &random))
                    } else {
                        context.insert(Dishes.random(id: id, using: &random))
                    }
                }
                guard let sequence = try context.save() else { continue }
                try live.catchUp()
                try cakes.catchUp()
                try named.catchUp()
                #expect(
                    named.results.map(\.id) == (try context.fetch(named.descriptor)).map(\.id),
                    "\(label), step \(step): shallow, not translated")
                #expect(named.error == nil && cakes.error == nil)
                let fresh = try context.fetch(descriptor)
                #expect(Self.same(live.results, fresh), "\(label), step \(step): results")
                #expect(
                    cakes.results.map(\.id)
                        == (try context.fetch(cakes.descriptor)).map(\.id), "\(label), step \(step): shallow")
                if !Self.same(previous, fresh) {
                    let change = try await Self.next(&changes)
                    #expect(change.sequence == sequence, "\(label), step \(step): the change's sequence")
                    #expect(Self.same(change.apply(to: previous), fresh), "\(label), step \(step): diff")
                    checked += 1
                }
                previous = fresh
            }
            #expect(live.error == nil)
            print("[family live oracle] \(label): \(checked) changes applied to the previous results")
        }
    }

    @Test func aRecordNamingAnUnknownKindIsATypedErrorNotACrash() throws {
        let container = try open()
        let context = ModelContext(container)
        context.insert(Cake(id: 1, name: "tart", rating: 3, minutes: 30, tags: []))
        context.insert(Drink(id: 2, name: "Tea", rating: 5, caffeinated: true, volume: nil))
        try context.save()
        let live = try FamilyLiveQuery(FamilyDescriptor<any Dish>(), in: container)
        #expect(live.results.count == 2)

        // A writer that names a kind the family does not list, and one that names none.
        let forger = try ModelContainer(
            for: ForgedDish.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store"))
        )
        let forging = ModelContext(forger)
        forging.insert(ForgedDish(id: 3, kind: "Pie", name: "pecan", rating: 9))
        forging.insert(ForgedDish(id: 4, kind: nil, name: "plain", rating: 1))
        try forging.save()

        #expect(throws: RillError.self) { try context.fetch(FamilyDescriptor<any Dish>()) }
        do {
            _ = try context.fetch(FamilyDescriptor<any Dish>())
        } catch let error as RillError {
            #expect(error.code == .decodingFailed)
            #expect(error.message.contains("\"Pie\""), "\(error.message)")
        }
        // Reads that test the kind first never decode them.
        #expect(try context.fetch(FetchDescriptor<Cake>()).map(\.id) == [1])
        #expect(try context.fetch(FamilyDescriptor<any Dish>(predicate: #Predicate { $0 is Drink })).count == 1)
        #expect(try context.model(Cake.self, id: 3) == nil)
        // The live query is suspended, not stopped, and reads again once the records are gone.
        try live.catchUp()
        #expect(live.error?.code == .decodingFailed)
        forging.delete(ForgedDish(id: 3, kind: nil, name: "", rating: 0))
        forging.delete(ForgedDish(id: 4, kind: nil, name: "", rating: 0))
        try forging.save()
        try live.catchUp()
        #expect(live.error == nil)
        #expect(live.results.map { $0.id } == [1, 2])
    }

    /// A model of the family's entity that writes the discriminator itself.
    struct ForgedDish: PersistentModel {
        static var entityName: String { "Dish" }
        var id: Int
        var kind: String?
        var name: String
        var rating: Int
    }

    /// Commits the follower had not read, compacted away by another process: the family's live
    /// query loads again at the head, and its one change turns what it had into a fresh fetch.
    @Test func aFamilyLiveQueryLoadsAgainWhenAnotherProcessFoldsCommitsItHadNotRead() async throws {
        var random = SeededGenerator(label: "family live query after a compaction")
        let container = try open()
        let context = ModelContext(container)
        for id in 0..<30 { context.insert(Dishes.random(id: id, using: &random)) }
        try context.save()
        var descriptor = FamilyDescriptor<any Dish>()
        descriptor.fetchLimit = 20
        let live = try FamilyLiveQuery(descriptor, in: container)
        var changes = live.changes.makeAsyncIterator()
        var previous = live.results
        let follower = try #require(LogFollowers.running(for: container.store.fileID))
        try follower.holding {
            for _ in 0..<8 {
                let id = Int.random(in: 0..<40, using: &random)
                if Bool.random(using: &random) {
                    context.delete(Dishes.random(id: id, using: &random))
                } else {
                    context.insert(Dishes.random(id: id, using: &random))
                }
                try context.save()
            }
            _ = try container.store.compact(before: try container.store.head())
        }
        try live.catchUp()
        #expect(live.error == nil)
        #expect(Self.same(live.results, try context.fetch(descriptor)))
        let change = try await Self.next(&changes)
        change.apply(to: &previous)
        #expect(Self.same(previous, live.results))
    }

    static func same(_ lhs: [any Dish], _ rhs: [any Dish]) -> Bool {
        lhs.count == rhs.count && zip(lhs, rhs).allSatisfy { Dishes.same($0, $1) }
    }

    /// The next change, or a failure after 10 s.
    static func next(
        _ iterator: inout AsyncStream<ResultsChange<any Dish>>.AsyncIterator
    ) async throws -> ResultsChange<any Dish> {
        let box = IteratorBox(iterator)
        let change = try await withThrowingTaskGroup(of: ResultsChange<any Dish>?.self) { group in
            group.addTask { await box.next() }
            group.addTask {
                try await Task.sleep(for: .seconds(10))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        iterator = box.iterator
        guard let change else { throw RillError(.misuse, "no change within 10 s") }
        return change
    }

    private final class IteratorBox: @unchecked Sendable {
        // Sendable: used by one task at a time.
        var iterator: AsyncStream<ResultsChange<any Dish>>.AsyncIterator
        init(_ iterator: AsyncStream<ResultsChange<any Dish>>.AsyncIterator) { self.iterator = iterator }
        func next() async -> ResultsChange<any Dish>? { await iterator.next() }
    }
}
