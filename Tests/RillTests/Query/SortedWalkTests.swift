import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Sorts served by walking an index backwards, by a compound index, or by an index the sort is a
/// prefix of, and the planner's choice between ranges on one index and the sort's walk of
/// another: every result against the same query with no index (a scan sorted in memory) and
/// against Swift's own evaluation (`Predicate.evaluate`, `sorted(using:)`), on random data full
/// of ties and extreme values.
@Suite struct SortedWalkTests {
    let directory = TemporaryDirectory()

    struct Post: PersistentModel, Equatable {
        static let entityName = "Post"
        var id: Int
        var created: Date
        /// Extreme values and many ties, never NaN (Swift's `<` orders no NaN).
        var score: Double
        /// `score`'s values and NaN, checked against the in-memory sort of a scan.
        var ratio: Double
        var writer: Int
        var number: Int
        var rank: Int?
        var level: Int

        static let indexes: [ModelIndex<Post>] = [
            ModelIndex(\.created), ModelIndex(\.score), ModelIndex(\.ratio), ModelIndex(\.writer),
            ModelIndex(\.number), ModelIndex(\.rank, \.number), ModelIndex(\.level, \.score),
        ]
    }

    /// The same records under another entity with one compound index, `(writer, number)`.
    struct Entry: PersistentModel, Equatable {
        static let entityName = "Entry"
        var id: Int
        var writer: Int
        var number: Int

        static let indexes: [ModelIndex<Entry>] = [ModelIndex(\.writer, \.number)]
    }

    static let scores: [Double] = [
        -.infinity, .infinity, 0, -0.0, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNonzeroMagnitude,
        1.5, 2.5, -3, 1e300, 9_007_199_254_740_992, Double(Int.max),
    ]
    static let numbers = [Int.min, Int.max, 0, -1, 1, Int.min + 1, Int.max - 1]
    static let dates: [Date] =
        [
            .distantPast, .distantFuture, Date(timeIntervalSinceReferenceDate: 0),
            Date(timeIntervalSinceReferenceDate: -1),
        ]
        + (0..<30).map { Date(timeIntervalSince1970: 1_700_000_000 + Double($0) * 3_600) }

    static func randomPost(id: Int, using random: inout SeededGenerator) -> Post {
        func pick<T>(_ values: [T], else other: () -> T) -> T {
            Int.random(in: 0..<3, using: &random) == 0 ? values.randomElement(using: &random)! : other()
        }
        let score = pick(scores) { Double(Int.random(in: -10...10, using: &random)) }
        return Post(
            id: id,
            created: dates.randomElement(using: &random)!,
            score: score,
            ratio: Int.random(in: 0..<8, using: &random) == 0 ? .nan : score,
            // Writer 0 is rare: its range is small enough to beat a walk in the sort's order.
            writer: id % 100 == 0 ? 0 : Int.random(in: 1...3, using: &random),
            number: pick(numbers) { Int.random(in: -30...30, using: &random) },
            rank: Int.random(in: 0..<3, using: &random) == 0
                ? nil : pick([Int.min, Int.max]) { Int.random(in: 0..<8, using: &random) },
            level: Int.random(in: 0..<3, using: &random))
    }

    typealias Case = (predicate: Predicate<Post>?, text: String)

    static func randomCase(_ random: inout SeededGenerator) -> Case {
        let date = dates.randomElement(using: &random)!
        let x = Double(Int.random(in: -10...10, using: &random))
        let n = Int.random(in: -30...30, using: &random)
        let r = Int.random(in: 0..<8, using: &random)
        let w = Int.random(in: 0...3, using: &random)
        switch Int.random(in: 0..<10, using: &random) {
        case 0: return (#Predicate { $0.created > date }, "created > \(date)")
        case 1: return (#Predicate { $0.score >= x && $0.score < 1e300 }, "score in [\(x), 1e300)")
        case 2: return (#Predicate { $0.rank == r }, "rank == \(r)")
        case 3: return (#Predicate { $0.rank == nil }, "rank == nil")
        case 4: return (#Predicate { $0.writer == w && $0.number >= n }, "writer == \(w) && number >= \(n)")
        case 5: return (#Predicate { $0.level == 1 && $0.score > x }, "level == 1 && score > \(x)")
        case 6: return (#Predicate { $0.writer == w }, "writer == \(w)")
        default: return (nil, "everything")
        }
    }

    static let sorts: [(descriptors: [SortDescriptor<Post>], text: String)] = [
        ([SortDescriptor(\.created, order: .reverse)], "created desc"),
        ([SortDescriptor(\.created)], "created"),
        ([SortDescriptor(\.score, order: .reverse)], "score desc"),
        ([SortDescriptor(\.number, order: .reverse)], "number desc"),
        ([SortDescriptor(\.number)], "number"),
        ([SortDescriptor(\.rank, order: .reverse)], "rank desc"),
        ([SortDescriptor(\.rank)], "rank"),
        (
            [SortDescriptor(\.rank, order: .reverse), SortDescriptor(\.number, order: .reverse)],
            "rank desc, number desc"
        ),
        ([SortDescriptor(\.rank), SortDescriptor(\.number)], "rank, number"),
        (
            [SortDescriptor(\.level, order: .reverse), SortDescriptor(\.score, order: .reverse)],
            "level desc, score desc"
        ),
        ([SortDescriptor(\.level, order: .reverse)], "level desc"),
        ([SortDescriptor(\.level), SortDescriptor(\.score, order: .reverse)], "level, score desc"),
    ]

    func savedPosts(_ random: inout SeededGenerator, count: Int) throws -> (ModelContainer, [Post]) {
        let container = try ModelContainer(
            for: Post.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("posts")))
        let posts = (0..<count).map { Self.randomPost(id: $0, using: &random) }
        for post in posts { container.mainContext.insert(post) }
        try container.mainContext.save()
        return (container, posts)
    }

    // MARK: - Typed fetches

    @Test func randomSortedFetchesMatchSwift() throws {
        var random = SeededGenerator(label: "sorted walks, fetches")
        let (container, posts) = try savedPosts(&random, count: 1_500)
        let context = container.mainContext
        var served = 0
        for round in 0..<300 {
            let (predicate, text) = Self.randomCase(&random)
            let sort = Self.sorts.randomElement(using: &random)!
            var descriptor = FetchDescriptor<Post>(predicate: predicate, sortBy: sort.descriptors)
            if Int.random(in: 0..<4, using: &random) != 0 {
                descriptor.fetchLimit = Int.random(in: 0...40, using: &random)
            }
            if Bool.random(using: &random) { descriptor.fetchOffset = Int.random(in: 0...30, using: &random) }
            // Swift's own answer: the predicate evaluated on every model, sorted by the same sort
            // descriptors, ties by identifier (ids are positive, so their keys sort as they do).
            let matches = try posts.filter { try predicate?.evaluate($0) ?? true }
            let expected = matches.sorted(using: sort.descriptors + [SortDescriptor(\Post.id)])
            let window = Array(expected.dropFirst(descriptor.fetchOffset ?? 0).prefix(descriptor.fetchLimit ?? .max))
            let fetched = try context.fetch(descriptor)
            let explain = try context.explain(descriptor)
            #expect(
                fetched.map(\.id) == window.map(\.id),
                "round \(round): \(text), sort \(sort.text), offset \(descriptor.fetchOffset ?? 0), limit \(descriptor.fetchLimit.map(String.init) ?? "none"), seed \(random.seed)\n\(explain)"
            )
            #expect(try context.fetchCount(descriptor) == window.count)
            if explain.contains("reverse order") || explain.contains("in identifier order") { served += 1 }
            if fetched.map(\.id) != window.map(\.id) { break }
        }
        #expect(served > 50)
        print("[sorted walks, fetches] 300 fetches matched Swift; \(served) walked backwards or by a prefix")
    }

    /// NaN sorts after every number in the index and in the in-memory sort alike (Swift's `<`
    /// orders no NaN, so the oracle is the text query's scan).
    @Test func descendingWalksPutNaNFirstAsTheInMemorySortDoes() throws {
        var random = SeededGenerator(label: "sorted walks, NaN")
        let (container, _) = try savedPosts(&random, count: 600)
        let store = container.store
        for text in [
            "Post sort by ratio desc limit 30", "Post sort by ratio limit 30",
            "Post sort by ratio desc offset 70 limit 50", "Post where ratio > 0 sort by ratio desc limit 30",
        ] {
            let query = try QueryParser.parse(text)
            let scanned = try store.run(query, forceScan: true).map(\.key)
            #expect(try store.run(query).map(\.key) == scanned, "\(text)")
            #expect(try store.explain(query).hasPrefix("index Post(ratio)"), "\(text)")
        }
        var descriptor = FetchDescriptor<Post>(sortBy: [SortDescriptor(\.ratio, order: .reverse)])
        descriptor.fetchLimit = 30
        let query = try QueryParser.parse("Post sort by ratio desc limit 30")
        let keys = try store.run(query, forceScan: true).map { $0.key.withUnsafeBytes { Int(storageKey: $0)! } }
        #expect(try container.mainContext.fetch(descriptor).map(\.id) == keys)
        #expect(try container.mainContext.fetch(descriptor).first?.ratio.isNaN == true)
    }

    // MARK: - Text queries

    @Test func randomSortedTextQueriesMatchAScan() throws {
        var random = SeededGenerator(label: "sorted walks, text")
        let (container, _) = try savedPosts(&random, count: 1_500)
        let store = container.store
        let fields = ["created", "score", "ratio", "number", "rank", "level", "writer"]
        let conditions = [
            "", "where created > 2023-11-14T23:13:20Z", "where rank == 3", "where rank == nil",
            "where writer == 2 and number >= 0", "where writer == 0 and number > -5", "where level == 2 and score > 0",
            "where ratio >= 0", "where number < 10",
        ]
        var served = 0
        for round in 0..<300 {
            var keys: [String] = []
            if Bool.random(using: &random), let level = ["level", "rank"].randomElement(using: &random) {
                // A compound index's fields, all one direction or mixed.
                let second = level == "level" ? "score" : "number"
                let desc = Bool.random(using: &random)
                keys = [
                    level + (desc ? " desc" : ""),
                    second + ((Bool.random(using: &random) ? desc : !desc) ? " desc" : ""),
                ]
            } else {
                keys = [fields.randomElement(using: &random)! + (Bool.random(using: &random) ? " desc" : "")]
            }
            var text = "Post " + conditions.randomElement(using: &random)! + " sort by " + keys.joined(separator: ", ")
            if Int.random(in: 0..<4, using: &random) != 0 { text += " limit \(Int.random(in: 1...40, using: &random))" }
            if Bool.random(using: &random) { text += " offset \(Int.random(in: 0...30, using: &random))" }
            let query = try QueryParser.parse(text)
            let scanned = try store.run(query, forceScan: true).map(\.key)
            let indexed = try store.run(query).map(\.key)
            let explain = try store.explain(query)
            #expect(indexed == scanned, "round \(round): \(text), seed \(random.seed)\n\(explain)")
            if explain.contains("reverse order") || explain.contains("in identifier order") { served += 1 }
            if indexed != scanned { break }
        }
        // About 72 of the 300 on average over seeds (58 to 88 in 16 of them; 49 with seed
        // 1277085564793719902): a floor well below, that no seed's draw of queries fails.
        #expect(served >= 30)
        print("[sorted walks, text] 300 queries matched a scan; \(served) walked backwards or by a prefix")
    }

    // MARK: - Plans

    @Test func explainDescribesTheWalks() throws {
        var random = SeededGenerator(seed: 3)
        let (container, _) = try savedPosts(&random, count: 2_000)
        let context = container.mainContext
        var newest = FetchDescriptor<Post>(sortBy: [SortDescriptor(\.created, order: .reverse)])
        newest.fetchLimit = 20
        let plan = try context.explain(newest)
        #expect(plan.hasPrefix("index Post(created): records in the index's reverse order"), "\(plan)")
        #expect(plan.contains("order: from the index, no sort needed"))

        let store = container.store
        func explain(_ text: String) throws -> String { try store.explain(QueryParser.parse(text)) }
        #expect(try explain("Post sort by created desc limit 5").contains("reverse order (read from the last key)"))
        #expect(
            try explain("Post where created > 2023-11-14T23:13:20Z sort by created desc").contains("1 key range"))
        #expect(
            try explain("Post where created > 2023-11-14T23:13:20Z sort by created desc").contains("reverse order"))
        #expect(
            try explain("Post sort by level desc, score desc limit 5").hasPrefix(
                "index Post(level,score): records in the index's reverse order"))
        #expect(
            try explain("Post sort by level, score desc limit 5").contains("sort by level, score desc, then identifier")
        )
        #expect(
            try explain("Post sort by rank desc limit 5").contains(
                "records in the index's reverse order (read from the last key), ties on (rank) in identifier order"))
        #expect(
            try explain("Post where rank == 3 sort by number desc limit 5").hasPrefix(
                "index Post(rank,number): 1 key range"))
        #expect(try explain("Post where rank == 3 sort by number desc limit 5").contains("order: from the index"))
        // Without a limit, a sort the ranges do not give is sorted in memory, as before.
        #expect(try explain("Post sort by created desc").hasPrefix("scan"))
    }

    @Test func aLimitedSortWalksItsIndexRatherThanSortingALargeRange() throws {
        var random = SeededGenerator(seed: 9)
        let (container, posts) = try savedPosts(&random, count: 2_000)
        let store = container.store
        // Writer 2 has about 660 records: more than 4 × √(5 × 2,000) = 400, so the walk of the
        // number index in its order (checking the writer on each record) is chosen.
        let large = try QueryParser.parse("Post where writer == 2 and number >= -10 sort by number limit 5")
        let plan = try store.explain(large)
        #expect(plan.hasPrefix("index Post(number): 1 key range for number >= -10"), "\(plan)")
        #expect(plan.contains("chosen over index (writer)"), "\(plan)")
        #expect(try store.run(large).map(\.key) == store.run(large, forceScan: true).map(\.key))
        // Writer 0 has 20 records: its range is read and sorted.
        let small = try QueryParser.parse("Post where writer == 0 and number >= -10 sort by number limit 5")
        #expect(try store.explain(small).hasPrefix("index Post(writer)"))
        #expect(try store.run(small).map(\.key) == store.run(small, forceScan: true).map(\.key))
        // The same for a typed fetch, descending.
        let w = 2
        let n = -10
        var descriptor = FetchDescriptor<Post>(
            predicate: #Predicate { $0.writer == w && $0.number >= n },
            sortBy: [SortDescriptor(\.number, order: .reverse)])
        descriptor.fetchLimit = 5
        #expect(try container.mainContext.explain(descriptor).contains("chosen over index (writer)"))
        let expected = posts.filter { $0.writer == w && $0.number >= n }
            .sorted(using: [SortDescriptor(\Post.number, order: .reverse), SortDescriptor(\Post.id)])
        #expect(try container.mainContext.fetch(descriptor).map(\.id) == expected.prefix(5).map(\.id))
        // A count reads every match whatever the order: it keeps to the writer's range.
        #expect(try container.mainContext.fetchCount(descriptor) == min(5, expected.count))
        descriptor.fetchLimit = nil
        #expect(try container.mainContext.fetchCount(descriptor) == expected.count)
    }

    @Test func aCompoundIndexServesItsEqualityAndTheSort() throws {
        var random = SeededGenerator(label: "sorted walks, compound")
        let container = try ModelContainer(
            for: Entry.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("entries")))
        var entries: [Entry] = []
        for id in 0..<800 {
            let post = Self.randomPost(id: id, using: &random)
            entries.append(Entry(id: id, writer: post.writer, number: post.number))
        }
        for entry in entries { container.mainContext.insert(entry) }
        try container.mainContext.save()
        let context = container.mainContext
        for (w, n, reverse, limit) in [
            (2, -10, true, 20), (2, -10, false, 20), (1, Int.min, true, 500), (0, 0, true, 3),
        ] {
            var descriptor = FetchDescriptor<Entry>(
                predicate: #Predicate { $0.writer == w && $0.number >= n },
                sortBy: [SortDescriptor(\.number, order: reverse ? .reverse : .forward)])
            descriptor.fetchLimit = limit
            let plan = try context.explain(descriptor)
            #expect(plan.hasPrefix("index Entry(writer,number): 1 key range"), "\(plan)")
            #expect(plan.contains("order: from the index, no sort needed"), "\(plan)")
            #expect(plan.contains("reverse order") == reverse, "\(plan)")
            let expected = entries.filter { $0.writer == w && $0.number >= n }
                .sorted(using: [
                    SortDescriptor(\Entry.number, order: reverse ? .reverse : .forward), SortDescriptor(\Entry.id),
                ])
            #expect(try context.fetch(descriptor).map(\.id) == expected.prefix(limit).map(\.id), "\(w) \(n) \(reverse)")
        }
        // The equality alone, sorted by identifier: a prefix of the index, not served.
        let query = try QueryParser.parse("Entry where writer == 2 sort by number desc, writer limit 10")
        #expect(try container.store.run(query).map(\.key) == container.store.run(query, forceScan: true).map(\.key))
        #expect(try container.store.explain(query).contains("reverse order"))
    }

    // MARK: - Live queries

    @Test func aLiveQueryOfTheNewestFollowsSaves() throws {
        var random = SeededGenerator(label: "sorted walks, live")
        let (container, _) = try savedPosts(&random, count: 300)
        var descriptor = FetchDescriptor<Post>(sortBy: [SortDescriptor(\.created, order: .reverse)])
        descriptor.fetchLimit = 15
        let query = try LiveQuery(descriptor, in: container)
        #expect(query.map(\.id) == (try container.mainContext.fetch(descriptor).map(\.id)))
        let context = ModelContext(container)
        for round in 0..<20 {
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                let id = Int.random(in: 0..<360, using: &random)
                if Int.random(in: 0..<4, using: &random) == 0 {
                    context.delete(Self.randomPost(id: id, using: &random))
                } else {
                    context.insert(Self.randomPost(id: id, using: &random))
                }
            }
            try context.save()
            try query.catchUp()
            let expected = try ModelContext(container).fetch(descriptor).map(\.id)
            #expect(query.map(\.id) == expected, "round \(round), seed \(random.seed)")
        }
    }
}
