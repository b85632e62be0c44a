import Foundation
import RillStorage
import RillTestSupport
import Testing

@testable import Rill

/// An entity's description keeps its fields in one shared box: a copy must still behave as a
/// value, and equality and hashing must read the fields, not the box.
@Suite struct EntityStorageTests {
    let directory = TemporaryDirectory()

    @Test func aChangedCopyLeavesTheOriginalAsItWas() throws {
        let store = try Store(directory: directory.path("store"), options: StoreOptions(), create: true)
        let item = try store.registerEntity(
            named: "Item", identifierKind: .integer, indexes: [[["title"]], [["code"]]], uniqueness: ["code": .fail])
        #expect(item.indexes.count == 2)
        #expect(item.indexedFields == ["title", "code"])
        #expect(item.uniqueFields == ["code"])
        #expect(item.hasUniqueIndexes)

        var copy = item
        #expect(copy == item)
        copy.indexes.removeLast()
        copy.catalogVersion += 1
        copy.relationships = []
        // The copy changed; the original did not.
        #expect(copy.indexes.map(\.name) == ["title"])
        #expect(copy.indexedFields == ["title"])
        #expect(copy.uniqueFields.isEmpty)
        #expect(!copy.hasUniqueIndexes)
        #expect(copy.catalogVersion == item.catalogVersion + 1)
        #expect(item.indexes.count == 2)
        #expect(item.indexedFields == ["title", "code"])
        #expect(item.hasUniqueIndexes)
        #expect(copy != item)
        #expect(copy.name == item.name && copy.database == item.database)
    }

    @Test func descriptionsReadApartAreEqualAndHashAlike() throws {
        let store = try Store(directory: directory.path("store"), options: StoreOptions(), create: true)
        let item = try store.registerEntity(named: "Item", identifierKind: .string, indexes: [[["title"]]])
        let read = try store.entity(named: "Item")
        var rebuilt = item
        // A description made anew from the same fields: another box, the same value.
        rebuilt.indexes = Array(item.indexes)
        #expect(read == item)
        let stored = try #require(read)
        #expect(rebuilt == item)
        #expect(Set<EntityStorage>([item, stored, rebuilt]).count == 1)
        rebuilt.references = item.database
        #expect(rebuilt != item)
        #expect(Set<EntityStorage>([item, rebuilt]).count == 2)
    }
}
