import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Prepared plans against planning anew: fetches of one source form with random captured values
/// (NaN, infinities, text that spells a UUID, text longer than an index key keeps, `in` lists of
/// every length) share their translation's plan, and must return what brute force returns, by
/// Swift's own evaluation of the predicate; and the plan bound to each one's values must be the
/// plan made for it from nothing.
@Suite struct PreparedPlanTests {
    let directory = TemporaryDirectory()

    struct Item: PersistentModel {
        var id: Int
        var n: Int
        var d: Double
        var s: String
        var k: Int

        static let indexes: [ModelIndex<Item>] = [
            ModelIndex(\.n), ModelIndex(\.d), ModelIndex(\.s), ModelIndex(\.n, \.d),
        ]
    }

    static let uuidText = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"
    static let long = String(repeating: "x", count: 700)
    static let texts = ["", "a", "b", "Zürich", long + "1", long + "2", long, uuidText, uuidText.lowercased()]
    static let doubles: [Double] = [.nan, .infinity, -.infinity, 0, -0.0, 1.5, -2.25, 10, 37.75, 1e300]

    /// A fetch of one form: a descriptor of random values, and the sort and limit brute force
    /// applies (ties by identifier).
    typealias Form = (name: String, make: @Sendable (inout SeededGenerator) -> FetchDescriptor<Item>)

    static func double(_ random: inout SeededGenerator) -> Double {
        Bool.random(using: &random)
            ? doubles.randomElement(using: &random)! : Double(Int.random(in: -160...160, using: &random)) / 4
    }

    static let forms: [Form] = [
        (
            "n == a",
            { random in
                let a = Int.random(in: -2...22, using: &random)
                return FetchDescriptor(predicate: #Predicate<Item> { $0.n == a })
            }
        ),
        (
            "d == x",
            { random in
                let x = double(&random)
                return FetchDescriptor(predicate: #Predicate<Item> { $0.d == x })
            }
        ),
        (
            "s == t",
            { random in
                let t = texts.randomElement(using: &random)!
                return FetchDescriptor(predicate: #Predicate<Item> { $0.s == t })
            }
        ),
        (
            "n == a && d > x, sort by d, limit 5",
            { random in
                let a = Int.random(in: 0...20, using: &random)
                let x = double(&random)
                var descriptor = FetchDescriptor(
                    predicate: #Predicate<Item> { $0.n == a && $0.d > x }, sortBy: [SortDescriptor(\.d)])
                descriptor.fetchLimit = 5
                return descriptor
            }
        ),
        (
            "d > x && d < y, sort by d descending, limit 4",
            { random in
                let x = double(&random)
                let y = double(&random)
                var descriptor = FetchDescriptor(
                    predicate: #Predicate<Item> { $0.d > x && $0.d < y }, sortBy: [SortDescriptor(\.d, order: .reverse)]
                )
                descriptor.fetchLimit = 4
                return descriptor
            }
        ),
        (
            "ns.contains(n), sort by n, limit 3",
            { random in
                let ns = (0..<Int.random(in: 0...4, using: &random)).map { _ in Int.random(in: 0...20, using: &random) }
                var descriptor = FetchDescriptor(
                    predicate: #Predicate<Item> { ns.contains($0.n) }, sortBy: [SortDescriptor(\.n)])
                descriptor.fetchLimit = 3
                return descriptor
            }
        ),
        (
            "n == a && n == b, d > x && d > y (conjuncts that are often equal)",
            { random in
                let a = Int.random(in: 0...2, using: &random)
                let b = Int.random(in: 0...2, using: &random)
                let x = Double(Int.random(in: -1...1, using: &random))
                let y = Double(Int.random(in: -1...1, using: &random))
                return FetchDescriptor(predicate: #Predicate<Item> { $0.n == a && $0.n == b && $0.d > x && $0.d > y })
            }
        ),
        (
            "k == a && n > b",
            { random in
                let a = Int.random(in: 0...3, using: &random)
                let b = Int.random(in: -1...21, using: &random)
                return FetchDescriptor(predicate: #Predicate<Item> { $0.k == a && $0.n > b })
            }
        ),
        (
            "n < a, sort by d, limit 5 (a choice counted for each fetch)",
            { random in
                let a = Int.random(in: 0...22, using: &random)
                var descriptor = FetchDescriptor(
                    predicate: #Predicate<Item> { $0.n < a }, sortBy: [SortDescriptor(\.d)])
                descriptor.fetchLimit = 5
                return descriptor
            }
        ),
    ]

    @Test func preparedPlansGiveWhatBruteForceGives() throws {
        var random = SeededGenerator(label: "prepared plans")
        let container = try ModelContainer(
            for: Item.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("items")))
        let context = container.mainContext
        // Distinct doubles (no ties in a sort by `d`), the infinities among them.
        var ds = (0..<300).map { Double($0 - 150) / 4 }
        ds[7] = .infinity
        ds[8] = -.infinity
        ds.shuffle(using: &random)
        let items = (0..<300).map { id in
            Item(
                id: id, n: Int.random(in: 0...20, using: &random), d: ds[id],
                s: Self.texts.randomElement(using: &random)!, k: Int.random(in: 0...3, using: &random))
        }
        for item in items { context.insert(item) }
        try context.save()
        let store = container.store
        let entity = try #require(try store.entity(named: Item.entityName))
        var bound = 0
        for form in Self.forms {
            // The plan a form's fetches share, made again here beside a fresh plan of each.
            let shared = PreparedPlan()
            for _ in 0..<80 {
                let descriptor = form.make(&random)
                let fetched = try context.fetch(descriptor).map(\.id)
                #expect(
                    fetched == (try ExactRangeFetchTests.expected(descriptor, items)),
                    "\(form.name): \(descriptor.predicate!)")

                let predicate = ModelPredicate(of: descriptor)
                #expect(predicate.preparedPlan != nil, "\(form.name): not prepared")
                let sort = QueryExecutor<Item>.orderPreservingSortKeys(descriptor.sortBy) ?? []
                let limit = descriptor.fetchLimit
                let counter: QueryPlanner.KeyCounter = { index, ranges, bound in
                    (try? store.countKeys(of: index, in: ranges, upTo: bound, transaction: nil)) ?? 0
                }
                let node = predicate.translation?.node
                if shared.shape(for: entity, sort: sort, hasLimit: limit != nil) != nil { bound += 1 }
                let fresh = QueryPlanner.plan(node, sort: sort, limit: limit, entity: entity, counter: counter)
                let reused = QueryPlanner.plan(
                    node, sort: sort, limit: limit, entity: entity, counter: counter, prepared: shared)
                #expect(Self.describe(reused, entity) == Self.describe(fresh, entity), "\(form.name): \(node!)")
            }
        }
        // Most forms keep their plan: the fetches after the first bind it.
        #expect(bound > 400, "only \(bound) plans were bound")
    }

    struct Event: PersistentModel {
        var id: Int
        var n: Int
        var t: Date

        static let indexes: [ModelIndex<Event>] = [ModelIndex(\.t), ModelIndex(\.n, \.t)]
    }

    static let dates: [Date] = [
        Date(timeIntervalSinceReferenceDate: .nan), .distantPast, .distantFuture,
        Date(timeIntervalSinceReferenceDate: .infinity), Date(timeIntervalSinceReferenceDate: -.infinity),
        Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: -0.0),
    ]

    static func date(_ random: inout SeededGenerator) -> Date {
        Int.random(in: 0..<5, using: &random) == 0
            ? dates.randomElement(using: &random)!
            : Date(timeIntervalSinceReferenceDate: Double(Int.random(in: -100...100, using: &random)) * 1_000)
    }

    /// Ranges of dates hold the NaN date when every condition is `<=` or `>=` (`Date` derives
    /// them from `<`), and the planner reads its key as a second range: such plans are kept and
    /// bound like one-range plans, and give what planning anew and brute force give.
    @Test func rangesOfDatesThatHoldTheNaNDateArePrepared() throws {
        var random = SeededGenerator(label: "prepared date plans")
        let container = try ModelContainer(
            for: Event.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("dates")))
        let context = container.mainContext
        let events = (0..<200).map { id in
            Event(id: id, n: Int.random(in: 0...5, using: &random), t: Self.date(&random))
        }
        for event in events { context.insert(event) }
        try context.save()
        let store = container.store
        let entity = try #require(try store.entity(named: Event.entityName))
        typealias DateForm = (name: String, make: (inout SeededGenerator) -> FetchDescriptor<Event>)
        let forms: [DateForm] = [
            (
                "t <= x",
                { random in
                    let x = Self.date(&random)
                    return FetchDescriptor(predicate: #Predicate<Event> { $0.t <= x })
                }
            ),
            (
                "t >= x && t <= y, sort by t, limit 6",
                { random in
                    let (x, y) = (Self.date(&random), Self.date(&random))
                    var descriptor = FetchDescriptor(
                        predicate: #Predicate<Event> { $0.t >= x && $0.t <= y }, sortBy: [SortDescriptor(\.t)])
                    descriptor.fetchLimit = 6
                    return descriptor
                }
            ),
            (
                "n == a && t >= x, sort by t descending, limit 4",
                { random in
                    let a = Int.random(in: 0...5, using: &random)
                    let x = Self.date(&random)
                    var descriptor = FetchDescriptor(
                        predicate: #Predicate<Event> { $0.n == a && $0.t >= x },
                        sortBy: [SortDescriptor(\.t, order: .reverse)])
                    descriptor.fetchLimit = 4
                    return descriptor
                }
            ),
        ]
        for form in forms {
            let shared = PreparedPlan()
            var bound = 0
            for _ in 0..<60 {
                let descriptor = form.make(&random)
                // Sorted by date with the NaN date after every other (the order of Rill's sorts,
                // reversed by a reverse sort), ties by identifier.
                let reverse = descriptor.sortBy.first?.order == .reverse
                func key(_ event: Event) -> (Int, Double) {
                    let interval = event.t.timeIntervalSinceReferenceDate
                    return interval.isNaN ? (1, 0) : (0, interval)
                }
                var expected = try events.filter { try descriptor.predicate!.evaluate($0) }
                if !descriptor.sortBy.isEmpty {
                    expected.sort { a, b in
                        let (left, right) = (key(a), key(b))
                        if left != right { return reverse ? right < left : left < right }
                        return a.id < b.id
                    }
                }
                let fetched = try context.fetch(descriptor).map(\.id)
                #expect(fetched == Array(expected.prefix(descriptor.fetchLimit ?? .max).map(\.id)), "\(form.name)")

                let predicate = ModelPredicate(of: descriptor)
                let sort = QueryExecutor<Event>.orderPreservingSortKeys(descriptor.sortBy) ?? []
                let limit = descriptor.fetchLimit
                let node = predicate.translation?.node
                if shared.shape(for: entity, sort: sort, hasLimit: limit != nil) != nil { bound += 1 }
                let fresh = QueryPlanner.plan(node, sort: sort, limit: limit, entity: entity)
                let reused = QueryPlanner.plan(node, sort: sort, limit: limit, entity: entity, prepared: shared)
                #expect(Self.describe(reused, entity) == Self.describe(fresh, entity), "\(form.name): \(node!)")
            }
            // A NaN date as a bound gives no range, and is planned anew; every other fetch binds.
            #expect(bound > 45, "\(form.name): only \(bound) of 60 plans were bound")
        }
    }

    /// A plan's access, order, walk and whether it covers the predicate, in words.
    static func describe(_ plan: QueryPlan, _ entity: EntityStorage) -> String {
        plan.describeAccess(entity: entity.name, recordCount: 300, hasIndexes: true).joined(separator: "; ")
            + " sorted \(plan.isSorted) walk \(plan.walk) covers \(plan.coversPredicate)"
    }

    /// A NaN keeps the equality on `d` from an index; a plan kept then is still correct for a
    /// number, and the plan kept for a number is not used for a NaN.
    @Test func aValueTheKeptPlanCannotKeyIsPlannedAnew() throws {
        let container = try ModelContainer(
            for: Item.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("nan")))
        let context = container.mainContext
        let items = (0..<40).map { Item(id: $0, n: $0 % 5, d: Double($0 % 7), s: "s", k: $0 % 2) }
        for item in items { context.insert(item) }
        try context.save()
        func make(_ a: Int, _ x: Double) -> FetchDescriptor<Item> {
            FetchDescriptor(predicate: #Predicate<Item> { $0.d == x && $0.n == a })
        }
        for (a, x) in [(1, Double.nan), (1, 3.0), (2, 3.0), (3, .nan), (3, 3.0), (4, -0.0), (0, 0.0)] {
            let descriptor = make(a, x)
            #expect(
                try context.fetch(descriptor).map(\.id) == (try ExactRangeFetchTests.expected(descriptor, items)),
                "\(a), \(x)")
        }
    }
}
