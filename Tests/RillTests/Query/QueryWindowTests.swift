import Foundation
import RillTestSupport
import Testing

@testable import Rill

/// The one window arithmetic of fetches, text queries and live queries, against slicing an
/// array, with extreme offsets and limits.
@Suite struct QueryWindowTests {
    let directory = TemporaryDirectory()

    static let extremes: [Int?] = [nil, Int.min, -1, 0, 1, 2, 5, 7, Int.max - 1, Int.max]

    @Test func theWindowIsTheSliceOfTheResults() {
        for count in [0, 1, 3, 7] {
            let results = Array(0..<count)
            for offset in Self.extremes {
                for limit in Self.extremes {
                    let window = QueryWindow(offset: offset, limit: limit)
                    let expected = Array(results.dropFirst(max(offset ?? 0, 0)).prefix(max(limit ?? .max, 0)))
                    #expect(
                        Array(results[window.range(in: count)]) == expected, "\(count) \(offset as Any) \(limit as Any)"
                    )
                }
            }
        }
    }

    @Test func fetchesTextQueriesAndLiveQueriesTakeAnyWindow() throws {
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: directory.url.appending(path: "store")))
        let context = container.mainContext
        for id in 0..<7 { context.insert(Counter(id: id, value: id)) }
        try context.save()
        let all = Array(0..<7)
        for offset in Self.extremes {
            for limit in Self.extremes {
                let expected = Array(all.dropFirst(max(offset ?? 0, 0)).prefix(max(limit ?? .max, 0)))
                for sort in [[], [SortDescriptor(\Counter.value, order: .reverse)]] {
                    var descriptor = FetchDescriptor<Counter>(sortBy: sort)
                    descriptor.fetchOffset = offset
                    descriptor.fetchLimit = limit
                    let ordered = sort.isEmpty ? expected : expected.map { 6 - $0 }
                    #expect(try context.fetch(descriptor).map(\.id) == ordered, "\(offset as Any) \(limit as Any)")
                    #expect(try context.fetchCount(descriptor) == expected.count)
                    let live = try LiveQuery(descriptor, in: container)
                    #expect(live.map(\.id) == ordered, "live \(offset as Any) \(limit as Any)")
                }
                var query = Query(entity: "Counter", sort: [QuerySortKey(path: ["value"])])
                query.offset = offset
                query.limit = limit
                let ids = try container.store.run(query).map { row in row.key.withUnsafeBytes { Int(storageKey: $0)! }
                }
                #expect(ids == expected, "text \(offset as Any) \(limit as Any)")
            }
        }
    }
}
