import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// A NaN date (`Date(timeIntervalSinceReferenceDate: .nan)`) is compared as `Date` compares it:
/// `==`, `<` and `>` never hold, while `<=` and `>=`, which `Date` derives from `<` (`a <= b` is
/// `!(b < a)`), always do, from either side. Fetches through an index on the date, through one
/// that fixes a field before it, and without one, with every comparison and range, must return
/// what `Predicate.evaluate` returns; sorts put a NaN date after every date.
@Suite struct NaNDateTests {
    let directory = TemporaryDirectory()

    struct Event: PersistentModel, Equatable {
        var id: Int
        var when: Date
        var plain: Date
        var flag: Bool

        static let indexes: [ModelIndex<Event>] = [ModelIndex(\.when), ModelIndex(\.flag, \.plain)]
    }

    static let nan = Date(timeIntervalSinceReferenceDate: .nan)
    static let dates: [Date] = [
        nan, Date(timeIntervalSinceReferenceDate: -.nan), .distantPast, .distantFuture,
        Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: -0.0),
        Date(timeIntervalSinceReferenceDate: .infinity), Date(timeIntervalSinceReferenceDate: -.infinity),
        Date(timeIntervalSinceReferenceDate: 1e9), Date(timeIntervalSinceReferenceDate: -1),
    ]

    static func predicates(_ c: Date, _ d: Date) -> [(String, Predicate<Event>)] {
        let closed = min(c, d)...max(c, d), open = min(c, d)..<max(c, d)
        return [
            ("when < c", #Predicate { $0.when < c }), ("when <= c", #Predicate { $0.when <= c }),
            ("when > c", #Predicate { $0.when > c }), ("when >= c", #Predicate { $0.when >= c }),
            ("when == c", #Predicate { $0.when == c }), ("when != c", #Predicate { $0.when != c }),
            ("c < when", #Predicate { c < $0.when }), ("c <= when", #Predicate { c <= $0.when }),
            ("c > when", #Predicate { c > $0.when }), ("c >= when", #Predicate { c >= $0.when }),
            ("when >= c && when <= d", #Predicate { $0.when >= c && $0.when <= d }),
            ("when > c && when <= d", #Predicate { $0.when > c && $0.when <= d }),
            ("when >= c && when < d", #Predicate { $0.when >= c && $0.when < d }),
            ("closed.contains(when)", #Predicate { closed.contains($0.when) }),
            ("open.contains(when)", #Predicate { open.contains($0.when) }),
            ("[c, d].contains(when)", #Predicate { [c, d].contains($0.when) }),
            ("!(when <= c)", #Predicate { !($0.when <= c) }),
            ("when <= plain", #Predicate { $0.when <= $0.plain }),
            ("when > plain", #Predicate { $0.when > $0.plain }),
            ("plain <= c", #Predicate { $0.plain <= c }), ("plain > c", #Predicate { $0.plain > c }),
            ("flag && plain <= c", #Predicate { $0.flag && $0.plain <= c }),
            ("flag && plain > c", #Predicate { $0.flag && $0.plain > c }),
            ("!flag && plain >= c && plain <= d", #Predicate { !$0.flag && $0.plain >= c && $0.plain <= d }),
        ]
    }

    /// The failures of every predicate over every pair of the dates, fetched and counted, against
    /// Foundation over `events`.
    static func mismatches(_ context: ModelContext, _ events: [Event]) throws -> [String] {
        var found: [String] = []
        for c in dates {
            for d in dates.prefix(6) {
                for (name, predicate) in predicates(c, d) {
                    let expected = try events.filter { try predicate.evaluate($0) }.map(\.id)
                    let fetched = try context.fetch(
                        FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.id)]))
                    let count = try context.fetchCount(FetchDescriptor(predicate: predicate))
                    if fetched.map(\.id) != expected || count != expected.count {
                        let label = "c = \(c.timeIntervalSinceReferenceDate), d = \(d.timeIntervalSinceReferenceDate)"
                        found.append(
                            "\(name), \(label): fetched \(fetched.count) (count \(count)), Foundation \(expected.count)"
                        )
                    }
                }
            }
        }
        return found
    }

    func events(_ random: inout SeededGenerator, count: Int) -> [Event] {
        (0..<count).map { id in
            Event(
                id: id, when: Self.dates.randomElement(using: &random)!,
                plain: Self.dates.randomElement(using: &random)!,
                flag: Bool.random(using: &random))
        }
    }

    @Test func comparisonsAgreeWithFoundation() throws {
        var random = SeededGenerator(label: "nan dates, comparisons")
        let container = try ModelContainer(
            for: Event.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = ModelContext(container)
        var events = events(&random, count: 80)
        for event in events { context.insert(event) }
        try context.save()
        var failures = try Self.mismatches(context, events)
        // Unsaved changes are matched by the models.
        let staged = Event(id: 200, when: Self.nan, plain: Self.nan, flag: true)
        context.insert(staged)
        events.append(staged)
        failures += try Self.mismatches(context, events).map { "unsaved: \($0)" }
        #expect(failures.isEmpty, "\(failures.count) fetches differ:\n\(failures.prefix(30).joined(separator: "\n"))")
    }

    @Test func liveQueriesFollowNaNDates() throws {
        var random = SeededGenerator(label: "nan dates, live queries")
        let container = try ModelContainer(
            for: Event.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("live")))
        let context = ModelContext(container)
        for event in events(&random, count: 30) { context.insert(event) }
        try context.save()
        let zero = Date(timeIntervalSinceReferenceDate: 0)
        let descriptors = Self.predicates(zero, .distantFuture).map { name, predicate in
            (name, FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.when), SortDescriptor(\.id)]))
        }
        let queries = try descriptors.map { try LiveQuery($0.1, in: container) }
        for round in 0..<6 {
            for event in events(&random, count: 40).shuffled(using: &random).prefix(8) {
                context.insert(Event(id: event.id + round * 7, when: event.when, plain: event.plain, flag: event.flag))
            }
            try context.save()
            for (query, (name, descriptor)) in zip(queries, descriptors) {
                try query.catchUp()
                let fresh = try context.fetch(descriptor).map(\.id)
                #expect(query.results.map(\.id) == fresh, "\(name), round \(round)")
            }
        }
    }

    @Test func nanDatesSortAfterEveryDate() throws {
        var random = SeededGenerator(label: "nan dates, sorts")
        let container = try ModelContainer(
            for: Event.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("sorts")))
        let context = ModelContext(container)
        var events = events(&random, count: 50)
        for event in events { context.insert(event) }
        try context.save()
        func expected(_ key: KeyPath<Event, Date>, reverse: Bool) -> [Int] {
            events.sorted { lhs, rhs in
                let (a, b) = (
                    lhs[keyPath: key].timeIntervalSinceReferenceDate, rhs[keyPath: key].timeIntervalSinceReferenceDate
                )
                if a.isNaN != b.isNaN { return reverse ? a.isNaN : b.isNaN }
                if !a.isNaN, a != b { return reverse ? a > b : a < b }
                return lhs.id < rhs.id
            }.map(\.id)
        }
        for unsaved in [false, true] {
            if unsaved {
                let staged = Event(id: 100, when: Self.nan, plain: Self.nan, flag: false)
                context.insert(staged)
                events.append(staged)
            }
            for key in [\Event.when, \Event.plain] {
                for reverse in [false, true] {
                    let sort = [SortDescriptor(key, order: reverse ? .reverse : .forward), SortDescriptor(\Event.id)]
                    let ids = try context.fetch(FetchDescriptor(sortBy: sort)).map(\.id)
                    #expect(ids == expected(key, reverse: reverse), "\(key), reverse: \(reverse), unsaved: \(unsaved)")
                    var window = FetchDescriptor(sortBy: sort)
                    window.fetchLimit = 5
                    window.fetchOffset = events.count - 8
                    #expect(try context.fetch(window).map(\.id) == Array(ids.dropFirst(events.count - 8).prefix(5)))
                }
            }
        }
    }

    /// A range of dates that holds the NaN date (`<=` on an index of dates) is two key ranges,
    /// the dates' and the NaN date's, still read in the index's order for a sort on the date,
    /// forwards and backwards, through a limit: the answer is Foundation's, and no sort is made.
    @Test func rangesHoldingTheNaNDateAreWalkedInTheSortsOrder() throws {
        var random = SeededGenerator(label: "nan dates, sorted walks")
        let container = try ModelContainer(
            for: Event.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("walks")))
        let context = ModelContext(container)
        let events = events(&random, count: 60)
        for event in events { context.insert(event) }
        try context.save()
        let zero = Date(timeIntervalSinceReferenceDate: 0), later = Date(timeIntervalSinceReferenceDate: 1e9)
        let cases: [(String, Predicate<Event>, KeyPath<Event, Date> & Sendable)] = [
            ("when <= 0", #Predicate { $0.when <= zero }, \.when),
            ("when >= 0 && when <= 1e9", #Predicate { $0.when >= zero && $0.when <= later }, \.when),
            ("flag && plain <= 0", #Predicate { $0.flag && $0.plain <= zero }, \.plain),
        ]
        for (name, predicate, key) in cases {
            for reverse in [false, true] {
                let expected = try events.filter { try predicate.evaluate($0) }.sorted { lhs, rhs in
                    let (a, b) = (
                        lhs[keyPath: key].timeIntervalSinceReferenceDate,
                        rhs[keyPath: key].timeIntervalSinceReferenceDate
                    )
                    if a.isNaN != b.isNaN { return reverse ? a.isNaN : b.isNaN }
                    if !a.isNaN, a != b { return reverse ? a > b : a < b }
                    return lhs.id < rhs.id
                }.map(\.id)
                #expect(expected.contains { events[$0][keyPath: key].timeIntervalSinceReferenceDate.isNaN }, "\(name)")
                for offset in [0, 3, max(0, expected.count - 4)] {
                    var descriptor = FetchDescriptor(
                        predicate: predicate, sortBy: [SortDescriptor(key, order: reverse ? .reverse : .forward)])
                    descriptor.fetchOffset = offset
                    descriptor.fetchLimit = 5
                    let label = "\(name), reverse: \(reverse), offset \(offset)"
                    #expect(
                        try context.fetch(descriptor).map(\.id) == Array(expected.dropFirst(offset).prefix(5)),
                        "\(label)")
                    let plan = try context.explain(descriptor)
                    #expect(plan.contains("2 key ranges") && plan.contains("no sort needed"), "\(label): \(plan)")
                }
            }
        }
    }
}
