import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

@Suite struct CaseInsensitiveCompareTests {
    @Test func comparesIgnoringCaseInsidePredicates() throws {
        let same = ComparisonResult.orderedSame
        let before = ComparisonResult.orderedAscending
        let title = "dune"
        let equal = #Predicate<Book> { $0.title.caseInsensitiveCompare(title) == same }
        let earlier = #Predicate<Book> { $0.title.caseInsensitiveCompare(title) == before }
        let books = ["Dune", "DUNE", "dune", "Dunes", "Cat", "emma"].map { Book(title: $0, author: "A") }
        #expect(try books.filter { try equal.evaluate($0) }.map(\.title) == ["Dune", "DUNE", "dune"])
        #expect(try books.filter { try earlier.evaluate($0) }.map(\.title) == ["Cat"])

        let directory = TemporaryDirectory()
        let container = try ModelContainer(
            for: Book.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        for book in books { container.mainContext.insert(book) }
        try container.mainContext.save()
        let fetched = try ModelContext(container).fetch(
            FetchDescriptor(predicate: equal, sortBy: [SortDescriptor(\.title)]))
        #expect(fetched.map(\.title) == ["DUNE", "Dune", "dune"])
    }
}
