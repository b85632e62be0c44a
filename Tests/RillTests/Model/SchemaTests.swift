import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// `Schema`, as SwiftData's app template sets a container up with one.
@Suite struct SchemaTests {
    let directory = TemporaryDirectory()

    struct Shelf: PersistentModel, Equatable {
        var id: Int
        var label: String
    }

    @Test func theTemplatesSetupStoresTheSchemasTypes() throws {
        let schema = Schema([Book.self, Shelf.self, Book.self])
        #expect(schema.types.count == 2)
        #expect(schema == Schema(Book.self, Shelf.self))
        #expect(schema != Schema(Shelf.self, Book.self))
        #expect(Set([schema, Schema(Book.self, Shelf.self)]).count == 1)

        let url = directory.url.appendingPathComponent("template")
        let configuration = ModelConfiguration(schema: schema, url: url)
        let container = try ModelContainer(for: schema, configurations: [configuration])
        #expect(container.schema == schema)
        let context = container.mainContext
        context.insert(Book(title: "Emma", author: "Jane Austen"))
        context.insert(Shelf(id: 1, label: "classics"))
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Book>()) == 1)
        #expect(try context.fetchCount(FetchDescriptor<Shelf>()) == 1)
    }

    @Test func aConfigurationsSchemaAddsItsTypes() throws {
        let configuration = ModelConfiguration(
            schema: Schema(Shelf.self), url: directory.url.appendingPathComponent("added"))
        let container = try ModelContainer(for: Book.self, configurations: configuration)
        #expect(container.schema == Schema(Book.self, Shelf.self))
        let context = ModelContext(container)
        context.insert(Shelf(id: 2, label: "poetry"))
        try context.save()
        #expect(try context.fetch(FetchDescriptor<Shelf>()) == [Shelf(id: 2, label: "poetry")])

        // A type neither names is still refused.
        let other = try ModelContainer(
            for: Schema(Book.self), configurations: ModelConfiguration(url: directory.url.appendingPathComponent("b")))
        #expect(throws: RillError.self) { try ModelContext(other).fetchCount(FetchDescriptor<Shelf>()) }
    }

    @Test func anInMemorySchemaContainer() throws {
        let schema = Schema([Shelf.self])
        let container = try ModelContainer(
            for: schema, configurations: ModelConfiguration(schema: schema, isStoredInMemoryOnly: true))
        container.mainContext.insert(Shelf(id: 3, label: "new"))
        try container.mainContext.save()
        #expect(try container.mainContext.fetchCount(FetchDescriptor<Shelf>()) == 1)
    }
}
