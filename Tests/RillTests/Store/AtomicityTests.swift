import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

@Suite struct AtomicityTests {
    let directory = TemporaryDirectory()

    func makeContainer() throws -> ModelContainer {
        try ModelContainer(
            for: Book.self, Author.self, Fragile.self,
            configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
    }

    @Test func saveWhoseSecondChangeFailsToEncodeWritesNothing() throws {
        let container = try makeContainer()
        let context = container.mainContext
        context.insert(Fragile(id: 0, fails: false))
        try context.save()
        let before = try StoreAudit(directory: container.store.directory)

        context.insert(Fragile(id: 1, fails: false))
        context.insert(Fragile(id: 2, fails: true))
        let error = #expect(throws: RillError.self) { try context.save() }
        #expect(error?.code == .encodingFailed)
        #expect(error?.message.contains("`fails`") == true)
        #expect(error?.message.contains("Fragile 2") == true)

        let after = try StoreAudit(directory: container.store.directory)
        #expect(after.head == before.head)
        #expect(after.projected == before.projected)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Fragile>()) == 1)
        // The changes stay staged, so the caller can fix them and save again.
        #expect(context.hasChanges)
        context.insert(Fragile(id: 2, fails: false))
        #expect(try context.save() == 2)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Fragile>()) == 3)
    }

    @Test func saveWithAnOversizedIdentifierWritesNothing() throws {
        let container = try makeContainer()
        let context = container.mainContext
        context.insert(Author(id: "short", name: "fine"))
        context.insert(Author(id: String(repeating: "é", count: 300), name: "too long"))
        let error = #expect(throws: RillError.self) { try context.save() }
        #expect(error?.code == .invalidIdentifier)
        #expect(try container.lastSequence() == 0)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Author>()) == 0)
        let lookup = #expect(throws: RillError.self) {
            try context.model(Author.self, id: String(repeating: "x", count: 600))
        }
        #expect(lookup?.code == .invalidIdentifier)
    }

    @Test func modelOutsideTheSchemaIsRejected() throws {
        let container = try ModelContainer(
            for: Book.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("narrow")))
        container.mainContext.insert(Author(id: "a", name: "b"))
        let error = #expect(throws: RillError.self) { try container.mainContext.save() }
        #expect(error?.code == .unknownEntity)
        #expect(throws: RillError.self) { try container.mainContext.fetch(FetchDescriptor<Author>()) }
        #expect(try container.lastSequence() == 0)
    }

    @Test func largeSaveWhoseLastModelFailsToEncodeWritesNothing() throws {
        // Large saves are encoded while the writer already stores the first chunks; a failure in
        // the last chunk must still abort the whole transaction.
        let container = try makeContainer()
        let context = container.mainContext
        for id in 0..<20_000 { context.insert(Fragile(id: id, fails: id == 19_999)) }
        let error = #expect(throws: RillError.self) { try context.save() }
        #expect(error?.code == .encodingFailed)
        #expect(error?.message.contains("Fragile 19999") == true)
        #expect(try container.lastSequence() == 0)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Fragile>()) == 0)
    }

    @Test func largeSaveThatFillsTheMapIsReplayedOnce() throws {
        let container = try ModelContainer(
            for: Counter.self,
            configurations: ModelConfiguration(
                url: directory.url.appendingPathComponent("small"), initialMapSize: 1 << 20))
        let context = container.mainContext
        for id in 0..<30_000 { context.insert(Counter(id: id, value: id, payload: String(repeating: "p", count: 100))) }
        #expect(try context.save() == 1)
        #expect(container.store.mapSize > 1 << 20)
        #expect(try container.store.entryCount() == 1)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Counter>()) == 30_000)
        let audit = try StoreAudit(directory: container.store.directory)
        #expect(audit.projectionsMatchReplay)
        #expect(audit.replayed["Counter"]?.count == 30_000)
    }
}
