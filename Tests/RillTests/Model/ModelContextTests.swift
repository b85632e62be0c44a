import Foundation
import RillStorage
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

@Suite struct ModelContextTests {
    let directory = TemporaryDirectory()

    func makeContainer(_ name: String = "store") throws -> ModelContainer {
        try ModelContainer(
            for: Book.self, Author.self, Fragile.self,
            configurations: ModelConfiguration(url: directory.url.appendingPathComponent(name)))
    }

    static let books = [
        Book(title: "Dune", author: "Herbert", pages: 412, isRead: true),
        Book(title: "Emma", author: "Austen", pages: 474),
        Book(title: "Persuasion", author: "Austen", pages: 249),
        Book(title: "Solaris", author: "Lem", pages: 204, rating: 4.5),
        Book(title: "Ubik", author: "Dick", pages: 202, isRead: true, rating: 4),
    ]

    @Test func savedModelsAreFetchedFromAnotherContext() throws {
        let container = try makeContainer()
        let context = container.mainContext
        for book in Self.books { context.insert(book) }
        #expect(context.hasChanges)
        let sequence = try context.save()
        #expect(sequence == 1)
        #expect(!context.hasChanges)

        let other = ModelContext(container)
        let fetched = try other.fetch(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.title)]))
        #expect(fetched == Self.books.sorted { $0.title < $1.title })
        #expect(try other.model(Book.self, id: Self.books[3].id) == Self.books[3])
        #expect(try other.model(Book.self, id: UUID()) == nil)
    }

    @Test func fetchAppliesPredicateSortOffsetAndLimit() throws {
        let context = try makeContainer().mainContext
        for book in Self.books { context.insert(book) }
        try context.save()

        var descriptor = FetchDescriptor<Book>(
            predicate: #Predicate { !$0.isRead },
            sortBy: [SortDescriptor(\.author), SortDescriptor(\.title, order: .reverse)])
        #expect(try context.fetch(descriptor).map(\.title) == ["Persuasion", "Emma", "Solaris"])
        #expect(try context.fetchCount(descriptor) == 3)
        descriptor.fetchOffset = 1
        descriptor.fetchLimit = 1
        #expect(try context.fetch(descriptor).map(\.title) == ["Emma"])
        #expect(try context.fetchCount(descriptor) == 1)
        #expect(try context.fetchIdentifiers(descriptor) == [Self.books[1].id])
        #expect(try context.fetchCount(FetchDescriptor<Book>()) == 5)
    }

    @Test func unsortedResultsFollowIdentifierOrder() throws {
        let context = try makeContainer().mainContext
        for (index, name) in ["b", "d", "a", "c"].enumerated() {
            context.insert(Author(id: name, name: "Author \(index)"))
        }
        try context.save()
        context.insert(Author(id: "bb", name: "unsaved"))
        #expect(try context.fetch(FetchDescriptor<Author>()).map(\.id) == ["a", "b", "bb", "c", "d"])
        var limited = FetchDescriptor<Author>()
        limited.fetchLimit = 2
        #expect(try context.fetch(limited).map(\.id) == ["a", "b"])
    }

    @Test func fetchSeesUnsavedInsertsAndDeletes() throws {
        let container = try makeContainer()
        let context = container.mainContext
        context.insert(Self.books[0])
        context.insert(Self.books[1])
        try context.save()

        context.delete(Self.books[0])
        var changed = Self.books[1]
        changed.title = "Emma (annotated)"
        context.insert(changed)
        context.insert(Self.books[2])
        let seen = try context.fetch(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.title)]))
        #expect(seen.map(\.title) == ["Emma (annotated)", "Persuasion"])
        #expect(try context.model(Book.self, id: Self.books[0].id) == nil)
        // Another context sees only what was saved.
        let saved = try ModelContext(container).fetch(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.title)]))
        #expect(saved.map(\.title) == ["Dune", "Emma"])

        context.rollback()
        #expect(!context.hasChanges)
        #expect(try context.fetchCount(FetchDescriptor<Book>()) == 2)
    }

    @Test func logRecordsInsertsUpdatesDeletesAndAuthor() throws {
        let container = try makeContainer()
        let context = container.mainContext
        context.author = "importer"
        context.insert(Self.books[0])
        context.insert(Self.books[1])
        try context.save()

        var updated = Self.books[0]
        updated.isRead = false
        updated.rating = 3
        context.insert(updated)
        context.delete(Self.books[1])
        context.delete(Self.books[2])  // never stored: not recorded
        context.author = nil
        #expect(try context.save() == 2)

        let entries = try container.store.entries(after: 0)
        #expect(entries.map(\.sequence) == [1, 2])
        #expect(entries[0].author == "importer")
        #expect(entries[0].changes.map(\.kind) == [.insert, .insert])
        #expect(entries[1].author == nil)
        #expect(entries[1].changes.map(\.kind) == [.update, .delete])
        #expect(entries[1].changes[0].changedFields == ["isRead", "rating"])
        #expect(entries[1].changes[1].record == nil)
        #expect(entries[1].timestamp >= entries[0].timestamp)
    }

    @Test func savingUnchangedModelsWritesNoCommit() throws {
        let container = try makeContainer()
        let context = container.mainContext
        context.insert(Self.books[0])
        try context.save()
        context.insert(Self.books[0])
        #expect(try context.save() == nil)
        #expect(try container.lastSequence() == 1)
        #expect(try context.save() == nil)
    }

    @Test func deleteWhereStagesMatchingDeletions() throws {
        let context = try makeContainer().mainContext
        for book in Self.books { context.insert(book) }
        try context.save()
        try context.delete(model: Book.self, where: #Predicate { $0.author == "Austen" })
        #expect(try context.fetchCount(FetchDescriptor<Book>()) == 3)
        try context.save()
        #expect(try ModelContext(context.container).fetch(FetchDescriptor<Book>()).allSatisfy { $0.author != "Austen" })
        try context.delete(model: Book.self)
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Book>()) == 0)
    }

    @Test func swiftDataSpellingsReadAndDeleteAsTheirShorterForms() throws {
        let context = try makeContainer().mainContext
        for book in Self.books { context.insert(book) }
        try context.save()
        var descriptor = FetchDescriptor<Book>(
            predicate: #Predicate { $0.pages > 100 }, sortBy: [SortDescriptor(\.title)])
        let whole = try context.fetch(descriptor)
        descriptor.propertiesToFetch = [\.title]
        #expect(try context.fetch(descriptor) == whole)
        #expect(!whole.isEmpty)
        try context.delete(model: Book.self, where: #Predicate { $0.author == "Austen" }, includeSubclasses: false)
        try context.save()
        #expect(
            try context.fetch(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.title)]))
                == Self.books.filter { $0.author != "Austen" }.sorted { $0.title < $1.title })
    }

    @Test func twoContainersOnOneStoreShareIt() throws {
        let first = try makeContainer()
        let second = try makeContainer()
        first.mainContext.insert(Self.books[0])
        try first.mainContext.save()
        #expect(try second.mainContext.fetch(FetchDescriptor<Book>()) == [Self.books[0]])
        #expect(first.store.environment.directory == second.store.environment.directory)
    }

    @Test func randomOperationsMatchAnOracle() throws {
        var random = SeededGenerator(label: "context oracle")
        let context = try makeContainer().mainContext
        var oracle: [UUID: Book] = [:]
        let authors = ["Austen", "Lem", "Le Guin", "Dick", "Herbert"]
        for _ in 0..<60 {
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<5:
                    let book = Book(
                        title: "T\(Int.random(in: 0..<30, using: &random))",
                        author: authors.randomElement(using: &random)!,
                        pages: Int.random(in: 1...900, using: &random),
                        isRead: Bool.random(using: &random))
                    context.insert(book)
                    oracle[book.id] = book
                case 5..<8:
                    guard var book = oracle.values.randomElement(using: &random) else { continue }
                    book.pages = Int.random(in: 1...900, using: &random)
                    book.isRead.toggle()
                    context.insert(book)
                    oracle[book.id] = book
                default:
                    guard let book = oracle.values.randomElement(using: &random) else { continue }
                    context.delete(book)
                    oracle[book.id] = nil
                }
            }
            try context.save()
            let minimum = Int.random(in: 1...900, using: &random)
            var descriptor = FetchDescriptor<Book>(
                predicate: #Predicate { $0.pages >= minimum || $0.isRead },
                sortBy: [SortDescriptor(\.author), SortDescriptor(\.pages, order: .reverse)])
            descriptor.fetchOffset = Int.random(in: 0...3, using: &random)
            descriptor.fetchLimit = Int.random(in: 1...20, using: &random)
            let expected = oracle.values
                .filter { $0.pages >= minimum || $0.isRead }
                .sorted {
                    if $0.author != $1.author { return $0.author < $1.author }
                    if $0.pages != $1.pages { return $0.pages > $1.pages }
                    return $0.id.storageKey.lexicographicallyPrecedes($1.id.storageKey)
                }
                .dropFirst(descriptor.fetchOffset!).prefix(descriptor.fetchLimit!)
            #expect(try context.fetch(descriptor) == Array(expected))
            #expect(try context.fetchCount(FetchDescriptor<Book>()) == oracle.count)
        }
    }

    @Test func inMemoryStoreWorksAndIsRemovedWithItsContainer() throws {
        var path = ""
        do {
            let container = try ModelContainer(
                for: Book.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
            path = container.store.directory
            container.mainContext.insert(Self.books[0])
            try container.mainContext.save()
            #expect(try ModelContext(container).fetch(FetchDescriptor<Book>()) == [Self.books[0]])
            #expect(FileManager.default.fileExists(atPath: path))
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func unsyncedSavesAreReadableAndFlushWrites() throws {
        var configuration = ModelConfiguration(url: directory.url.appendingPathComponent("unsynced"))
        configuration.durability = .unsynced
        let container = try ModelContainer(for: Book.self, configurations: configuration)
        container.mainContext.insert(Self.books[0])
        try container.mainContext.save()
        try container.flush()
        #expect(try ModelContext(container).fetch(FetchDescriptor<Book>()) == [Self.books[0]])
    }
}
