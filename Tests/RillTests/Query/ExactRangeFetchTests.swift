import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Fetches read straight from the one index range that is exactly their predicate
/// (`QueryExecutor.exactRangeModels(window:moving:)`), against brute force: Swift's own evaluation of
/// the predicate on every model, sorted as the descriptor says with ties by identifier, cut to
/// its offset and limit. Random captured values of each form, extreme ones among them (the
/// infinities, -0.0, NaN, the distant dates, text that spells a UUID, text longer than an index
/// key keeps), over records whose index entries list several identifiers (identifiers too long
/// for a key). Forms the range does not decide exactly must never take it.
@Suite struct ExactRangeFetchTests {
    let directory = TemporaryDirectory()

    struct Item: PersistentModel {
        var id: Int
        var n: Int
        var d: Double
        var t: Date
        var s: String
        var flag: Bool

        static let indexes: [ModelIndex<Item>] = [
            ModelIndex(\.n), ModelIndex(\.d), ModelIndex(\.t), ModelIndex(\.s), ModelIndex(\.n, \.d),
            ModelIndex(\.flag, \.n),
        ]
    }

    /// A model whose identifiers are too long for an index key: entries of equal `n` whose
    /// identifiers share their first bytes are one key listing them all.
    struct Tag: PersistentModel {
        var id: String
        var n: Int

        static let indexes: [ModelIndex<Tag>] = [ModelIndex(\.n)]
    }

    /// A model whose index orders strings after a fixed field: a sort by them is served by
    /// the index, each string checked as it is read, never by the range alone.
    struct Note: PersistentModel {
        var id: Int
        var n: Int
        var s: String

        static let indexes: [ModelIndex<Note>] = [ModelIndex(\.n, \.s)]
    }

    static let long = String(repeating: "x", count: 700)
    static let texts = ["", "a", "b", "Zürich", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", long + "1", long + "2"]
    static let doubles: [Double] = [.nan, .infinity, -.infinity, 0, -0.0, 1.5, -2.25, 1e300, -1e-300]
    static let dates: [Date] = [.distantPast, .distantFuture, Date(timeIntervalSinceReferenceDate: 0)]

    static func double(_ random: inout SeededGenerator) -> Double {
        Int.random(in: 0..<4, using: &random) == 0
            ? doubles.randomElement(using: &random)! : Double(Int.random(in: -40...40, using: &random)) / 4
    }

    static func date(_ random: inout SeededGenerator) -> Date {
        Int.random(in: 0..<4, using: &random) == 0
            ? dates.randomElement(using: &random)!
            : Date(timeIntervalSinceReferenceDate: Double(Int.random(in: -20...20, using: &random)) * 1_000)
    }

    /// A window: no offset or limit, or random ones.
    static func window(_ descriptor: inout FetchDescriptor<Item>, _ random: inout SeededGenerator) {
        if Bool.random(using: &random) { descriptor.fetchLimit = Int.random(in: 0...6, using: &random) }
        if Bool.random(using: &random) { descriptor.fetchOffset = Int.random(in: 0...4, using: &random) }
    }

    /// A form: its name, whether the range is exactly its predicate (for the values that key
    /// exactly), and a descriptor of random values.
    typealias Form = (name: String, exact: Bool, make: @Sendable (inout SeededGenerator) -> FetchDescriptor<Item>)

    static let forms: [Form] = [
        (
            "n == a", true,
            { random in
                let a = Int.random(in: -1...12, using: &random)
                var descriptor = FetchDescriptor(predicate: #Predicate<Item> { $0.n == a })
                window(&descriptor, &random)
                return descriptor
            }
        ),
        (
            "d == x", true,
            { random in
                let x = double(&random)
                var descriptor = FetchDescriptor(predicate: #Predicate<Item> { $0.d == x })
                window(&descriptor, &random)
                return descriptor
            }
        ),
        (
            "t == x", true,
            { random in
                let x = date(&random)
                return FetchDescriptor(predicate: #Predicate<Item> { $0.t == x })
            }
        ),
        (
            "s == x (long text is cut to a prefix in its key: not exact)", true,
            { random in
                let x = texts.randomElement(using: &random)!
                return FetchDescriptor(predicate: #Predicate<Item> { $0.s == x })
            }
        ),
        (
            "flag == b && n == a", true,
            { random in
                let b = Bool.random(using: &random)
                let a = Int.random(in: 0...11, using: &random)
                var descriptor = FetchDescriptor(predicate: #Predicate<Item> { $0.flag == b && $0.n == a })
                window(&descriptor, &random)
                return descriptor
            }
        ),
        (
            "n == a && d >= x, sort by d", true,
            { random in
                let a = Int.random(in: 0...11, using: &random)
                let x = double(&random)
                var descriptor = FetchDescriptor(
                    predicate: #Predicate<Item> { $0.n == a && $0.d >= x }, sortBy: [SortDescriptor(\.d)])
                window(&descriptor, &random)
                return descriptor
            }
        ),
        (
            "d > x && d < y, sort by d", true,
            { random in
                let x = double(&random)
                let y = double(&random)
                var descriptor = FetchDescriptor(
                    predicate: #Predicate<Item> { $0.d > x && $0.d < y }, sortBy: [SortDescriptor(\.d)])
                window(&descriptor, &random)
                return descriptor
            }
        ),
        (
            "t >= x, sort by t", true,
            { random in
                let x = date(&random)
                var descriptor = FetchDescriptor(
                    predicate: #Predicate<Item> { $0.t >= x }, sortBy: [SortDescriptor(\.t)])
                window(&descriptor, &random)
                return descriptor
            }
        ),
        (
            "d < x, sort by d descending (a backward walk)", true,
            { random in
                let x = double(&random)
                var descriptor = FetchDescriptor(
                    predicate: #Predicate<Item> { $0.d < x }, sortBy: [SortDescriptor(\.d, order: .reverse)])
                window(&descriptor, &random)
                return descriptor
            }
        ),
        (
            "t < x, sort by t descending (ties in identifier order, read backward)", true,
            { random in
                let x = date(&random)
                var descriptor = FetchDescriptor(
                    predicate: #Predicate<Item> { $0.t < x }, sortBy: [SortDescriptor(\.t, order: .reverse)])
                window(&descriptor, &random)
                return descriptor
            }
        ),
        (
            "n == a && d <= x, sort by d descending", true,
            { random in
                let a = Int.random(in: 0...11, using: &random)
                let x = double(&random)
                var descriptor = FetchDescriptor(
                    predicate: #Predicate<Item> { $0.n == a && $0.d <= x },
                    sortBy: [SortDescriptor(\.d, order: .reverse)])
                window(&descriptor, &random)
                return descriptor
            }
        ),
        (
            "n == a && s == x (s is not in the range)", false,
            { random in
                let a = Int.random(in: 0...11, using: &random)
                let x = texts.randomElement(using: &random)!
                return FetchDescriptor(predicate: #Predicate<Item> { $0.n == a && $0.s == x })
            }
        ),
        (
            "n == a || n == b (a union)", false,
            { random in
                let a = Int.random(in: 0...11, using: &random)
                let b = Int.random(in: 0...11, using: &random)
                return FetchDescriptor(predicate: #Predicate<Item> { $0.n == a || $0.n == b })
            }
        ),
        (
            "n == a, sort by s (text sorts are checked as they are read)", false,
            { random in
                let a = Int.random(in: 0...11, using: &random)
                var descriptor = FetchDescriptor(
                    predicate: #Predicate<Item> { $0.n == a }, sortBy: [SortDescriptor(\.s)])
                descriptor.fetchLimit = 3
                return descriptor
            }
        ),
        (
            "n > a (unsorted: identifier order, not the index's)", false,
            { random in
                let a = Int.random(in: -1...12, using: &random)
                return FetchDescriptor(predicate: #Predicate<Item> { $0.n > a })
            }
        ),
    ]

    /// Brute force: Swift's evaluation of the predicate on every item, sorted as the descriptor
    /// says with ties by identifier, cut to its window.
    static func expected<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, _ models: [T]
    ) throws -> [T.ID] where T.ID: Comparable {
        var matches = try models.filter { try descriptor.predicate?.evaluate($0) ?? true }
        matches.sort { a, b in
            for sort in descriptor.sortBy {
                switch sort.compare(a, b) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
            return a.id < b.id
        }
        return Array(matches.dropFirst(descriptor.fetchOffset ?? 0).prefix(descriptor.fetchLimit ?? .max).map(\.id))
    }

    @Test func exactRangesGiveWhatBruteForceGives() throws {
        var random = SeededGenerator(label: "exact range fetches")
        let container = try ModelContainer(
            for: Item.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("items")))
        let context = container.mainContext
        // Distinct doubles, so that a sort by `d` has no ties Swift and the index could order apart.
        var ds = (0..<400).map { Double($0 - 200) / 8 }
        ds[5] = .infinity
        ds[6] = -.infinity
        ds[7] = -0.0
        ds[8] = 1e300
        ds.shuffle(using: &random)
        var items = (0..<400).map { id in
            Item(
                id: id, n: Int.random(in: 0...11, using: &random), d: ds[id], t: Self.date(&random),
                s: Self.texts.randomElement(using: &random)!, flag: Bool.random(using: &random))
        }
        items.shuffle(using: &random)
        for item in items { context.insert(item) }
        try context.save()
        for form in Self.forms {
            var served = 0
            for round in 0..<60 {
                let descriptor = form.make(&random)
                let expected = try Self.expected(descriptor, items)
                // The first fetch of a form plans it, and keeps the plan the next ones bind.
                #expect(try context.fetch(descriptor).map(\.id) == expected, "\(form.name): \(descriptor.predicate!)")
                guard round > 0 else { continue }
                let window = QueryWindow(offset: descriptor.fetchOffset, limit: descriptor.fetchLimit)
                guard !window.isEmpty else { continue }
                if let read = try context.executor(for: descriptor).exactRangeModels(
                    window: window, moving: OrderedModels.array)
                {
                    served += 1
                    #expect(form.exact, "\(form.name) took an exact range")
                    #expect(read.map(\.id) == expected, "\(form.name): \(descriptor.predicate!)")
                }
            }
            // Values that key exactly (not NaN, not long text, not text that spells a UUID) are
            // at least half of each exact form's (about four in seven of "s == x"): a bound far
            // below what the seeds give, so that the test never depends on the draw.
            print("[exact range fetches] \(form.name): \(served) of 59 read the range alone")
            if form.exact { #expect(served > 12, "\(form.name): \(served) of 59 fetches read the range alone") }
        }
    }

    /// Staged changes are merged by the planned fetch: a fetch with any never takes the range.
    @Test func stagedChangesAreFetchedThroughThePlan() throws {
        let container = try ModelContainer(
            for: Item.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("staged")))
        let context = container.mainContext
        for id in 0..<20 {
            context.insert(Item(id: id, n: id % 4, d: Double(id), t: .distantPast, s: "", flag: false))
        }
        try context.save()
        for a in 0..<4 { _ = try context.fetch(FetchDescriptor(predicate: #Predicate<Item> { $0.n == a })) }
        context.insert(Item(id: 100, n: 1, d: -1, t: .distantPast, s: "", flag: true))
        context.delete(Item(id: 5, n: 1, d: 5, t: .distantPast, s: "", flag: false))
        let a = 1
        let descriptor = FetchDescriptor(predicate: #Predicate<Item> { $0.n == a })
        let window = QueryWindow(offset: nil, limit: nil)
        #expect(
            try context.executor(for: descriptor).exactRangeModels(window: window, moving: OrderedModels.array) == nil)
        #expect(try context.fetch(descriptor).map(\.id).sorted() == [1, 9, 13, 17, 100])
        try context.save()
        #expect(
            try context.executor(for: descriptor).exactRangeModels(window: window, moving: OrderedModels.array)?.map(
                \.id) == [1, 9, 13, 17, 100])
    }

    /// Index entries that list several identifiers (identifiers too long for a key, sharing
    /// their first bytes) are read whole, in identifier order.
    @Test func listedEntriesAreReadWhole() throws {
        var random = SeededGenerator(label: "exact range listed entries")
        let container = try ModelContainer(
            for: Tag.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("tags")))
        let context = container.mainContext
        let stem = String(repeating: "t", count: 505)
        let tags = (0..<120).map { number in Tag(id: stem + String(number), n: Int.random(in: 0...5, using: &random)) }
        for tag in tags.shuffled(using: &random) { context.insert(tag) }
        try context.save()
        // Entries of equal `n` whose identifiers agree on the bytes a key keeps list them.
        let listed = try container.store.read { snapshot in
            let index = try #require(try container.store.entity(named: Tag.entityName)?.indexes.first)
            var listed = 0
            try snapshot.forEachEntry(of: index) { _, value in
                if !value.isEmpty { listed += 1 }
                return true
            }
            return listed
        }
        #expect(listed > 0)
        var served = 0
        for round in 0..<40 {
            let a = Int.random(in: -1...6, using: &random)
            var descriptor = FetchDescriptor(predicate: #Predicate<Tag> { $0.n == a })
            if Bool.random(using: &random) { descriptor.fetchLimit = Int.random(in: 1...30, using: &random) }
            // The identifiers' numbers, after their common stem.
            func numbers(_ ids: [String]) -> [String] { ids.map { String($0.dropFirst(stem.count)) } }
            let expected = numbers(try Self.expected(descriptor, tags))
            #expect(numbers(try context.fetch(descriptor).map(\.id)) == expected, "n == \(a)")
            guard round > 0 else { continue }
            let window = QueryWindow(offset: nil, limit: descriptor.fetchLimit)
            if let read = try context.executor(for: descriptor).exactRangeModels(
                window: window, moving: OrderedModels.array)
            {
                served += 1
                #expect(numbers(read.map(\.id)) == expected, "n == \(a)")
            }
        }
        #expect(served > 30)
    }

    /// A sort by strings the index orders is never read from the range alone: Swift's `<` and
    /// the keys' order differ for some strings, which the planned fetch checks as it reads.
    @Test func stringSortsAreNotReadFromTheRangeAlone() throws {
        var random = SeededGenerator(label: "exact range string sorts")
        let container = try ModelContainer(
            for: Note.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("notes")))
        let context = container.mainContext
        let texts = ["a", "b", "\u{212B}", "\u{212B}b", "A\u{30A}", "\u{C5}a", "Z", ""]
        let notes = (0..<80).map { id in
            Note(id: id, n: Int.random(in: 0...3, using: &random), s: texts.randomElement(using: &random)!)
        }
        for note in notes { context.insert(note) }
        try context.save()
        for round in 0..<30 {
            let a = Int.random(in: 0...3, using: &random)
            var descriptor = FetchDescriptor(predicate: #Predicate<Note> { $0.n == a }, sortBy: [SortDescriptor(\.s)])
            descriptor.fetchLimit = Int.random(in: 1...8, using: &random)
            let matches = notes.filter { $0.n == a }
            let fetched = try context.fetch(descriptor)
            // Swift's order of the strings; equal ones (by `<` both ways) may come in any order.
            #expect(fetched.count == min(matches.count, descriptor.fetchLimit!))
            #expect(zip(fetched, fetched.dropFirst()).allSatisfy { !($1.s < $0.s) }, "n == \(a)")
            guard round > 0 else { continue }
            let window = QueryWindow(offset: nil, limit: descriptor.fetchLimit)
            #expect(
                try context.executor(for: descriptor).exactRangeModels(window: window, moving: OrderedModels.array)
                    == nil)
        }
    }

    /// Text queries of each form read the range their shape's plan keeps, when it is exactly
    /// their predicate: the same rows as the query forced to a full scan (the records tested
    /// one by one), whatever their values, offset and limit.
    @Test func textQueriesReadTheirExactRange() throws {
        var random = SeededGenerator(label: "exact range text queries")
        let container = try ModelContainer(
            for: Item.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("text")))
        let context = container.mainContext
        for id in 0..<300 {
            context.insert(
                Item(
                    id: id, n: Int.random(in: 0...9, using: &random),
                    d: Double(Int.random(in: -80...80, using: &random)) / 8,
                    t: Self.date(&random), s: Self.texts.randomElement(using: &random)!,
                    flag: Bool.random(using: &random)))
        }
        try context.save()
        let store = container.store
        func window(_ random: inout SeededGenerator) -> String {
            (Bool.random(using: &random) ? " limit \(Int.random(in: 0...6, using: &random))" : "")
                + (Bool.random(using: &random) ? " offset \(Int.random(in: 0...4, using: &random))" : "")
        }
        let forms: [(name: String, exact: Bool, make: (inout SeededGenerator) -> String)] = [
            ("n == a", true, { "Item where n == \(Int.random(in: -1...10, using: &$0))" + window(&$0) }),
            (
                "flag == b and n == a", true,
                { "Item where flag == \(Bool.random(using: &$0)) and n == \(Int.random(in: 0...9, using: &$0))" }
            ),
            (
                "n == a and d >= x sort by d", true,
                {
                    "Item where n == \(Int.random(in: 0...9, using: &$0)) and d >= \(Double(Int.random(in: -80...80, using: &$0)) / 8) sort by d"
                        + window(&$0)
                }
            ),
            (
                "d < x sort by d desc", true,
                { "Item where d < \(Double(Int.random(in: -80...80, using: &$0)) / 8) sort by d desc limit 3" }
            ),
            (
                "t < x sort by t desc (ties read backward)", true,
                {
                    let x = Date(timeIntervalSinceReferenceDate: Double(Int.random(in: -20...20, using: &$0) * 1_000))
                    return "Item where t < \(x.ISO8601Format()) sort by t desc" + window(&$0)
                }
            ),
            ("n > a", false, { "Item where n > \(Int.random(in: -1...10, using: &$0))" }),
            ("n == a and s == x", false, { "Item where n == \(Int.random(in: 0...9, using: &$0)) and s == \"a\"" }),
        ]
        for form in forms {
            var served = 0
            for round in 0..<40 {
                let query = try QueryParser.parse(form.make(&random))
                // Each row as its identifier key and record (NaN-free records: `==` is sameness).
                func rows(_ rows: [QueryRow]) -> [String] { rows.map { "\($0.key) \($0.record)" } }
                let scanned = rows(try store.run(query, forceScan: true))
                #expect(rows(try store.run(query)) == scanned, "\(query)")
                guard round > 0, let read = try store.exactRangeRows(of: query) else { continue }
                served += 1
                #expect(form.exact, "\(form.name) took an exact range")
                #expect(rows(read) == scanned, "\(query)")
            }
            if form.exact { #expect(served > 20, "\(form.name): \(served) of 39 queries read the range alone") }
        }
    }
}
