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

/// The window's answers for live queries' held rows and changes, against a window worked out by
/// slicing.
@Suite struct QueryWindowPositionTests {
    @Test func positionsAndEdgesAreThoseOfTheSlice() {
        for count in [0, 1, 3, 7, 12] {
            for offset in QueryWindowTests.extremes {
                for limit in QueryWindowTests.extremes {
                    let window = QueryWindow(offset: offset, limit: limit)
                    let kept = Array(window.range(in: count))
                    for position in 0..<count {
                        #expect(window.offset(ofPosition: position) == kept.firstIndex(of: position))
                    }
                    for width in [1, 2, 5] {
                        var edges = Array(kept.prefix(width))
                        if limit != nil { edges += kept.suffix(width).filter { !edges.contains($0) } }
                        #expect(window.edgePositions(in: count, width: width) == edges, "\(count) \(width)")
                    }
                    for kept in 0..<4 {
                        #expect(window.keepsMore(afterKeeping: kept) == (kept < (window.limit ?? .max)))
                    }
                }
            }
        }
    }

    @Test func sumsPastTheEndSaturate() {
        #expect(QueryWindow(offset: 2, limit: 3).end(plus: 4) == 9)
        #expect(QueryWindow(offset: 2, limit: nil).end(plus: 4) == nil)
        #expect(QueryWindow(offset: Int.max, limit: 1).end(plus: 16) == .max)
        #expect(QueryWindow(offset: 1, limit: Int.max / 2).end(plus: Int.max / 2) == .max)
        #expect(QueryWindow(offset: nil, limit: nil).keepsEverything)
        #expect(!QueryWindow(offset: 1, limit: nil).keepsEverything)
        #expect(!QueryWindow(offset: nil, limit: Int.max).keepsEverything)
    }
}
