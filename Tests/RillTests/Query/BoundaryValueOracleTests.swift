import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// The edges of every indexed kind, fetched and followed as an application would: `Int.min` and
/// `Int.max`, integers past a `Double`'s 53 bits, the infinities, `-0.0` and the smallest
/// subnormal, `Date.distantPast` and `distantFuture`, decimals of thirty digits, strings that are
/// equal only by canonical equivalence (`é` as one scalar and as two), that differ only in case or
/// width (`ﬁ`, the Kelvin sign), an embedded NUL, emoji, and missing optionals. Each fetch, through
/// whatever index or scan its plan picks, must return what Foundation's own `Predicate.evaluate`
/// and `sorted(using:)` return over every model; each live query's changes, applied to its
/// previous results, must give a fresh fetch.
@Suite struct BoundaryValueOracleTests {
    let directory = TemporaryDirectory()

    enum Kind: String, Codable, Sendable, CaseIterable { case alpha, beta, gamma }

    struct Item: PersistentModel, Equatable {
        var id: Int
        var name: String
        var score: Double
        var count: Int
        var rank: Int?
        var tag: String?
        var flag: Bool
        var when: Date
        var kind: Kind
        var tags: [String]
        var price: Decimal

        static let indexes: [ModelIndex<Item>] = [
            ModelIndex(\.name), ModelIndex(\.count), ModelIndex(\.flag, \.when), ModelIndex(\.rank),
            ModelIndex(\.score), ModelIndex(\.tag),
        ]
    }

    static let names = [
        "", "a", "A", "b", "B", "é", "e\u{301}", "E", "z", "Z", "straße", "STRASSE", "İstanbul", "istanbul", "😀",
        "a😀b", "apple", "Apple", "apples", "10", "9", "item 10", "item 9", "ﬁ", "fi", "\u{212A}", "K", "k", " a",
        "a ", "Ωmega", "ωmega", "日本", "にほん", "aB", "Ab", "x\u{0}y", "zz",
    ]
    static let doubles: [Double] = [
        0, -0.0, 1, -1, 0.5, .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
        .leastNonzeroMagnitude, 1e-300, 2.5, -100,
    ]
    static let integers: [Int] = [
        0, 1, -1, .max, .min, .max - 1, .min + 1, 42, 1 << 53, (1 << 53) + 1, -(1 << 53) - 1, 7,
    ]
    static let dates: [Date] = [
        Date(timeIntervalSince1970: 0), .distantPast, .distantFuture, Date(timeIntervalSinceReferenceDate: 0),
        Date(timeIntervalSinceReferenceDate: -1), Date(timeIntervalSinceReferenceDate: 1e9 + 0.5),
    ]
    static let decimals: [Decimal] = [
        0, 1, -1, Decimal(string: "0.1")!, Decimal(string: "123456789012345678901234567890")!,
        Decimal(string: "-0.0001")!, 10,
    ]

    static func item(_ id: Int, _ random: inout SeededGenerator) -> Item {
        func pick<Value>(_ values: [Value]) -> Value { values.randomElement(using: &random)! }
        let rank: Int? = Bool.random(using: &random) ? nil : pick(integers)
        let tag: String? = Bool.random(using: &random) ? nil : pick(names)
        return Item(
            id: id, name: pick(names), score: pick(doubles), count: pick(integers), rank: rank, tag: tag,
            flag: Bool.random(using: &random), when: pick(dates), kind: pick(Kind.allCases),
            tags: (0..<Int.random(in: 0...3, using: &random)).map { _ in pick(names) }, price: pick(decimals))
    }

    static func predicates() -> [(String, Predicate<Item>)] {
        let a = "a", big = Int.max, small = Int.min, half = 0.5, epoch = Date(timeIntervalSince1970: 0)
        let beta = Kind.beta, minusInfinity = -Double.infinity, past = Date.distantPast
        let tenth = Decimal(string: "0.1")!, same = ComparisonResult.orderedSame, some = ["a", "é", "K"]
        return [
            ("name == a", #Predicate { $0.name == "a" }),
            ("name == é (one scalar)", #Predicate { $0.name == "é" }),
            ("name == e + U+0301", #Predicate { $0.name == "e\u{301}" }),
            ("name < b", #Predicate { $0.name < "b" }),
            ("name >= Z", #Predicate { $0.name >= "Z" }),
            ("name > é", #Predicate { $0.name > "é" }),
            ("name contains a", #Predicate { $0.name.contains(a) }),
            ("name starts with a", #Predicate { $0.name.starts(with: "a") }),
            ("name localizedStandardContains A", #Predicate { $0.name.localizedStandardContains("A") }),
            ("name localizedStandardContains e", #Predicate { $0.name.localizedStandardContains("e") }),
            ("name localizedStandardContains ss", #Predicate { $0.name.localizedStandardContains("ss") }),
            ("name caseInsensitiveCompare", #Predicate { $0.name.caseInsensitiveCompare("apple") == same }),
            ("name in a list", #Predicate { some.contains($0.name) }),
            ("name isEmpty", #Predicate { $0.name.isEmpty }),
            ("name.count == 1", #Predicate { $0.name.count == 1 }),
            ("count == Int.max", #Predicate { $0.count == big }),
            ("count == Int.min", #Predicate { $0.count == small }),
            ("count > 0", #Predicate { $0.count > 0 }),
            ("count < 2^53 + 1", #Predicate { $0.count < 9_007_199_254_740_993 }),
            ("count in 0..<100", #Predicate { (0..<100).contains($0.count) }),
            ("count % 7 == 0", #Predicate { $0.count % 7 == 0 }),
            ("score > 0.5", #Predicate { $0.score > half }),
            ("score == 0", #Predicate { $0.score == 0 }),
            ("score < 0", #Predicate { $0.score < 0 }),
            ("score <= -infinity", #Predicate { $0.score <= minusInfinity }),
            ("score * 2 > 3", #Predicate { $0.score * 2 > 3 }),
            ("rank == nil", #Predicate { $0.rank == nil }),
            ("rank ?? 0 > 5", #Predicate { ($0.rank ?? 0) > 5 }),
            ("rank! > 0", #Predicate { $0.rank != nil && $0.rank! > 0 }),
            ("rank.flatMap", #Predicate { $0.rank.flatMap { $0 < 0 } ?? false }),
            ("tag == nil", #Predicate { $0.tag == nil }),
            ("tag == a", #Predicate { $0.tag == "a" }),
            ("tag?.contains", #Predicate { $0.tag?.contains("a") == true }),
            ("tag ?? name", #Predicate { ($0.tag ?? $0.name) == "a" }),
            ("!flag && kind", #Predicate { !$0.flag && $0.kind == beta }),
            ("when > 1970", #Predicate { $0.when > epoch }),
            ("when == distantPast", #Predicate { $0.when == past }),
            ("kind || count", #Predicate { $0.kind == beta || $0.count == 0 }),
            ("tags contains a", #Predicate { $0.tags.contains("a") }),
            ("tags contains where", #Predicate { $0.tags.contains { $0.starts(with: "a") } }),
            ("tags allSatisfy", #Predicate { $0.tags.allSatisfy { !$0.isEmpty } }),
            ("tags.first", #Predicate { $0.tags.first == "a" }),
            ("price > 1", #Predicate { $0.price > 1 }),
            ("price == 0.1", #Predicate { $0.price == tenth }),
            ("ternary", #Predicate { ($0.flag ? $0.count : $0.count / 2) > 0 }),
            ("!(flag || name)", #Predicate { !($0.flag || $0.name == "a") }),
            ("everything", #Predicate { _ in true }),
        ]
    }

    static let sorts: [(String, [SortDescriptor<Item>])] = [
        ("none", []),
        ("name", [SortDescriptor(\.name)]),
        ("name, reverse", [SortDescriptor(\.name, order: .reverse)]),
        ("name, lexical", [SortDescriptor(\.name, comparator: .lexical)]),
        ("count", [SortDescriptor(\.count)]),
        ("score, reverse", [SortDescriptor(\.score, order: .reverse)]),
        ("rank", [SortDescriptor(\.rank)]),
        ("rank, reverse", [SortDescriptor(\.rank, order: .reverse)]),
        ("tag", [SortDescriptor(\.tag)]),
        ("when, name", [SortDescriptor(\.when), SortDescriptor(\.name)]),
        ("kind", [SortDescriptor(\.kind.rawValue)]),
        ("price", [SortDescriptor(\.price)]),
    ]

    /// Every predicate under every sort (the identifier last, for one order) and three windows,
    /// against Foundation over `models`; returns the failures' descriptions.
    static func mismatches(
        _ context: ModelContext, _ models: [Int: Item], sorts: [(String, [SortDescriptor<Item>])]
    )
        throws -> [String]
    {
        let items = models.values.sorted { $0.id < $1.id }
        var found: [String] = []
        for (name, predicate) in predicates() {
            let matching = try items.filter { try predicate.evaluate($0) }
            let count = try context.fetchCount(FetchDescriptor(predicate: predicate))
            if count != matching.count { found.append("\(name): fetchCount \(count), Foundation \(matching.count)") }
            for (sortName, sort) in sorts {
                let order = sort + [SortDescriptor(\Item.id)]
                let sorted = matching.sorted(using: order).map(\.id)
                for (limit, offset) in [(nil, nil), (3, 2), (nil, 7)] as [(Int?, Int?)] {
                    var descriptor = FetchDescriptor(predicate: predicate, sortBy: order)
                    descriptor.fetchLimit = limit
                    descriptor.fetchOffset = offset
                    let fetched = try context.fetch(descriptor).map(\.id)
                    let expected = Array(sorted.dropFirst(offset ?? 0).prefix(limit ?? .max))
                    if fetched != expected {
                        found.append(
                            "\(name), sorted by \(sortName), limit \(limit.map(String.init) ?? "none"), offset "
                                + "\(offset.map(String.init) ?? "none"): fetched \(fetched.prefix(8)), Foundation "
                                + "\(expected.prefix(8)) (\(fetched.count) and \(expected.count))")
                    }
                }
            }
        }
        return found
    }

    /// A container of a new store named `name` holding `count` random items, saved, and the items.
    func stocked(
        _ name: String, with count: Int, _ random: inout SeededGenerator
    ) throws
        -> (ModelContainer, [Int: Item])
    {
        let container = try ModelContainer(
            for: Item.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent(name)))
        var models: [Int: Item] = [:]
        for id in 0..<count {
            models[id] = Self.item(id, &random)
            container.mainContext.insert(models[id]!)
        }
        try container.mainContext.save()
        return (container, models)
    }

    @Test func fetchesAgreeWithFoundation() throws {
        var random = SeededGenerator(label: "boundary values, fetches")
        let (container, saved) = try stocked("store", with: 160, &random)
        var models = saved
        let context = container.mainContext
        var failures = try Self.mismatches(context, models, sorts: Self.sorts)
        for _ in 0..<40 {
            let id = Int.random(in: 0..<180, using: &random)
            if Int.random(in: 0..<4, using: &random) == 0, let item = models[id] {
                context.delete(item)
                models[id] = nil
            } else {
                let item = Self.item(id, &random)
                models[id] = item
                context.insert(item)
            }
        }
        try context.save()
        failures += try Self.mismatches(
            context, models, sorts: Self.sorts.enumerated().filter { $0.offset % 2 == 1 }.map(\.element))
        let differing = failures.count
        #expect(differing == 0, "fetches that differ:\n\(failures.prefix(20).joined(separator: "\n"))")
    }

    /// The changes a live query's observer was handed.
    final class Changes: @unchecked Sendable {
        private let lock = NSLock()
        private var changes: [ResultsChange<Item>] = []

        func append(_ change: ResultsChange<Item>) { lock.withLock { changes.append(change) } }

        /// The changes handed so far, taken out.
        func take() -> [ResultsChange<Item>] {
            lock.withLock {
                defer { changes = [] }
                return changes
            }
        }
    }

    @Test func liveQueriesAgreeWithFreshFetches() throws {
        var random = SeededGenerator(label: "boundary values, live queries")
        let (container, saved) = try stocked("live", with: 120, &random)
        var models = saved
        let context = container.mainContext
        typealias Followed = (name: String, descriptor: FetchDescriptor<Item>, query: LiveQuery<Item>, changes: Changes)
        var followed: [Followed] = []
        var observations: [LiveObservation] = []
        for (index, (name, predicate)) in Self.predicates().enumerated() where index % 3 == 0 {
            let (sortName, sort) = Self.sorts[(index / 3) % Self.sorts.count]
            for limit in [nil, 4] as [Int?] {
                var descriptor = FetchDescriptor(predicate: predicate, sortBy: sort + [SortDescriptor(\Item.id)])
                descriptor.fetchLimit = limit
                let query = try LiveQuery(descriptor, in: container)
                let changes = Changes()
                observations.append(query.observe(on: DispatchQueue(label: "observer")) { changes.append($0) })
                followed.append(
                    (
                        "\(name), sorted by \(sortName), limit \(limit.map(String.init) ?? "none")", descriptor, query,
                        changes
                    ))
            }
        }
        var previous = try followed.map { try context.fetch($0.descriptor) }
        var failures: [String] = []
        var checked: UInt64 = 0
        for _ in 0..<10 {
            for _ in 0..<Int.random(in: 1...25, using: &random) {
                let id = Int.random(in: 0..<140, using: &random)
                if Int.random(in: 0..<4, using: &random) == 0, let item = models[id] {
                    context.delete(item)
                    models[id] = nil
                    continue
                }
                // Often one field changes, as an edit does: a row moves, enters or leaves.
                var item = models[id] ?? Self.item(id, &random)
                let fresh = Self.item(id, &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: item.name = fresh.name
                case 1: item.count = fresh.count
                case 2: (item.rank, item.tag) = (fresh.rank, fresh.tag)
                default: item = fresh
                }
                models[id] = item
                context.insert(item)
            }
            try context.save()
            for (index, entry) in followed.enumerated() {
                try entry.query.catchUp()
                let held = Array(entry.query)
                // The changes are on their way to the observer: applied as they come, until they
                // give what the query holds (or 5 s pass). A change of a commit checked before is
                // one that left nothing to see (a record saved as it was), and is left out.
                var applied = previous[index]
                let deadline = Date().addingTimeInterval(5)
                repeat {
                    for change in entry.changes.take() where change.sequence > checked { change.apply(to: &applied) }
                    if applied == held { break }
                    Thread.sleep(forTimeInterval: 0.001)
                } while Date() < deadline
                let fresh = try context.fetch(entry.descriptor)
                if applied != fresh || held != fresh {
                    failures.append(
                        "\(entry.name): changes applied \(applied.map(\.id).prefix(8)), held "
                            + "\(held.map(\.id).prefix(8)), fetched \(fresh.map(\.id).prefix(8))")
                }
                previous[index] = fresh
            }
            checked = followed.first?.query.sequence ?? checked
        }
        let differing = failures.count
        #expect(differing == 0, "live queries that differ:\n\(failures.prefix(20).joined(separator: "\n"))")
        withExtendedLifetime(observations) {}
    }
}
