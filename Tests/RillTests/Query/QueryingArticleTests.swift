import Foundation
import RillTestSupport
import Testing

@testable import Rill

/// The table of `Documentation/Rill.docc/Querying.md`: which predicate shapes an index serves, as `explain` shows.
@Suite struct QueryingArticleTests {
    struct Spec: Codable, Sendable {
        var weight: Int
    }

    struct Volume: PersistentModel {
        var id: Int
        var title: String
        var author: String
        var pages: Int
        var chapters: Int
        var isRead: Bool
        var rating: Double?
        var price: Decimal
        var tags: [String]
        var spec: Spec

        static let indexes: [ModelIndex<Volume>] = [
            ModelIndex(\.pages), ModelIndex(\.author, \.title), ModelIndex(\.isRead), ModelIndex(\.spec.weight),
            ModelIndex(\.price), ModelIndex(\.rating),
        ]
    }

    let directory = TemporaryDirectory()

    /// The first line of the plan of `predicate`, sorted by `sort` with `limit`.
    func plan(
        _ predicate: Predicate<Volume>?, sortBy sort: [SortDescriptor<Volume>] = [], limit: Int? = nil
    ) throws -> String {
        let container = try ModelContainer(
            for: Volume.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        var descriptor = FetchDescriptor(predicate: predicate, sortBy: sort)
        descriptor.fetchLimit = limit
        return String(try ModelContext(container).explain(descriptor).prefix { $0 != "\n" })
    }

    @Test func servedShapes() throws {
        let minimum = 100
        let served: [(Predicate<Volume>, String)] = [
            (#Predicate { $0.pages == 300 }, "index Volume(pages): 1 key range"),
            (#Predicate { 300 == $0.pages }, "index Volume(pages): 1 key range"),
            (#Predicate { $0.pages > minimum }, "index Volume(pages): 1 key range"),
            (#Predicate { 100 < $0.pages }, "index Volume(pages): 1 key range"),
            (#Predicate { $0.pages > 100 && $0.pages <= 400 }, "index Volume(pages): 1 key range"),
            (#Predicate { (100...400).contains($0.pages) }, "index Volume(pages): 1 key range"),
            (#Predicate { (100..<400).contains($0.pages) }, "index Volume(pages): 1 key range"),
            (#Predicate { [300, 412].contains($0.pages) }, "index Volume(pages): 2 key ranges"),
            (#Predicate { $0.author == "Jane Austen" }, "index Volume(author,title): 1 key range"),
            (
                #Predicate { $0.author == "Jane Austen" && $0.title == "Emma" },
                "index Volume(author,title): 1 key range"
            ),
            (#Predicate { $0.isRead }, "index Volume(isRead): 1 key range"),
            (#Predicate { $0.isRead == false }, "index Volume(isRead): 1 key range"),
            (#Predicate { $0.pages == 300 || $0.author == "Jane Austen" }, "union of 2 index scans"),
            (#Predicate { $0.pages > 100 && $0.title.contains("u") }, "index Volume(pages): 1 key range"),
            (#Predicate { $0.spec.weight > 5 }, "index Volume(spec.weight): 1 key range"),
            (#Predicate { $0.rating == 4.5 }, "index Volume(rating): 1 key range"),
            (#Predicate { $0.rating == nil }, "index Volume(rating): 1 key range"),
        ]
        for (predicate, expected) in served {
            let line = try plan(predicate)
            #expect(line.hasPrefix(expected), "\(predicate): \(line)")
        }
    }

    @Test func evaluatedShapes() throws {
        let nan = Double.nan
        let price = Decimal(10)
        let evaluated: [Predicate<Volume>] = [
            #Predicate { $0.title == "Emma" },
            #Predicate { $0.title < "M" },
            #Predicate { !$0.isRead },
            #Predicate { $0.pages != 300 },
            #Predicate { $0.title.contains("u") },
            #Predicate { $0.title.starts(with: "E") },
            #Predicate { $0.title.localizedStandardContains("e") },
            #Predicate { $0.pages * 2 > 100 },
            #Predicate { ($0.rating ?? 0) > 4 },
            #Predicate { $0.pages < $0.chapters },
            #Predicate { $0.tags.contains("sf") },
            #Predicate { $0.tags.isEmpty },
            #Predicate { $0.price == price },
            #Predicate { $0.rating == nan },
            #Predicate { $0.pages == 300 || $0.title.contains("u") },
        ]
        for predicate in evaluated {
            let line = try plan(predicate)
            #expect(line.hasPrefix("scan: every record of Volume"), "\(predicate): \(line)")
        }
    }

    @Test func anIndexServesASortWithALimitInEitherDirectionAndAStringSortAscending() throws {
        #expect(try plan(nil, sortBy: [SortDescriptor(\.pages)], limit: 10).hasPrefix("index Volume(pages): records"))
        #expect(try plan(nil, sortBy: [SortDescriptor(\.pages)]).hasPrefix("scan:"))
        #expect(
            try plan(nil, sortBy: [SortDescriptor(\.pages, order: .reverse)], limit: 10).hasPrefix(
                "index Volume(pages): records in the index's reverse order"))
        #expect(try plan(nil, sortBy: [SortDescriptor(\.pages, order: .reverse)]).hasPrefix("scan:"))
        // Strings ascending, checked as read (StringSortWalkTests); descending, in memory.
        #expect(
            try plan(nil, sortBy: [SortDescriptor(\.author), SortDescriptor(\.title)], limit: 10).hasPrefix(
                "index Volume(author,title): records"))
        #expect(
            try plan(
                nil, sortBy: [SortDescriptor(\.author, order: .reverse), SortDescriptor(\.title, order: .reverse)],
                limit: 10
            ).hasPrefix("scan:"))
    }
}
