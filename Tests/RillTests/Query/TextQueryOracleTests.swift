import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Text queries against brute force: random predicates are built twice, as a `QueryNode` and as
/// a Swift closure over the model; the node is printed as text, parsed back and run on the store,
/// and the results must equal the closure applied to every record, in the same order.
@Suite struct TextQueryOracleTests {
    let directory = TemporaryDirectory()

    typealias Check = @Sendable (Gadget) -> Bool

    /// Stages one random change to the gadget with a random identifier below `idSpace`: a
    /// deletion, a change to one field of the stored record, or a new or replaced gadget.
    static func stageRandomGadgetChange(
        in context: ModelContext, idSpace: Int, using random: inout SeededGenerator
    ) throws {
        let id = Int.random(in: 0..<idSpace, using: &random)
        var gadget = Gadget.random(id: id, using: &random)
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<3: context.delete(gadget)
        case 3..<5:
            guard var stored = try context.model(Gadget.self, id: id) else { fallthrough }
            stored.stock = Int.random(in: -5...200, using: &random)
            context.insert(stored)
        default:
            gadget.name = ["café", "Cafe", "mono", "Zu", "ñandú", gadget.name].randomElement(using: &random)!
            context.insert(gadget)
        }
    }

    struct Generator {
        var random: SeededGenerator
        let now = Date(timeIntervalSince1970: 1_700_000_000)

        mutating func pick<T>(_ values: [T]) -> T { values.randomElement(using: &random)! }

        /// Stages one random change to the gadget with a random identifier below `idSpace` (see
        /// `TextQueryOracleTests.stageRandomGadgetChange`).
        mutating func stageRandomGadgetChange(in context: ModelContext, idSpace: Int) throws {
            try TextQueryOracleTests.stageRandomGadgetChange(in: context, idSpace: idSpace, using: &random)
        }

        mutating func comparison() -> QueryComparison { pick(QueryComparison.allCases) }

        static func holds<T: Comparable>(_ op: QueryComparison, _ a: T, _ b: T) -> Bool {
            switch op {
            case .equal: a == b
            case .notEqual: a != b
            case .less: a < b
            case .lessOrEqual: a <= b
            case .greater: a > b
            case .greaterOrEqual: a >= b
            }
        }

        mutating func leaf() -> (QueryNode, Check) {
            switch Int.random(in: 0..<11, using: &random) {
            case 0:
                let op = comparison()
                let k = Int.random(in: -5...200, using: &random)
                return (.compare(op, .field(["stock"]), .literal(.int(Int64(k)))), { Self.holds(op, $0.stock, k) })
            case 1:
                let op = comparison()
                let x = Double(Int.random(in: -500...50_000, using: &random)) / 100
                return (.compare(op, .field(["price"]), .literal(.double(x))), { Self.holds(op, $0.price, x) })
            case 2:
                let test = pick(QueryStringTest.allCases.filter { $0 != .like })
                let options = pick([
                    QueryStringOptions(), .caseInsensitive, .diacriticInsensitive,
                    [.caseInsensitive, .diacriticInsensitive],
                ])
                let needle = pick(["ca", "fe", "fé", "CA", "mo", "mö", "re", "zu", "ñ", "n", "a"])
                var folding: String.CompareOptions = []
                if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
                if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
                let compare = folding
                let check: Check = { gadget in
                    let name = gadget.name
                    switch test {
                    case .contains: return name.range(of: needle, options: compare) != nil
                    case .beginsWith: return name.range(of: needle, options: compare.union(.anchored)) != nil
                    case .endsWith:
                        return name.range(of: needle, options: compare.union([.anchored, .backwards])) != nil
                    case .like: return false
                    }
                }
                return (.string(test, .field(["name"]), .literal(.string(needle)), options), check)
            case 3:
                return (.compare(.equal, .field(["maker"]), .literal(.null)), { $0.maker == nil })
            case 4:
                let maker = pick(["Acme", "acmé", "Bolt"] + TextQueryOracleTests.longMakers)
                return (.compare(.equal, .field(["maker"]), .literal(.string(maker))), { $0.maker == maker })
            case 5:
                return (.compare(.equal, .field(["active"]), .literal(.bool(true))), { $0.active })
            case 6:
                let a = Int.random(in: 0...1000, using: &random)
                let b = Int.random(in: a...1000, using: &random)
                return (
                    .between(
                        .field(["spec", "weight"]), lower: .literal(.int(Int64(a))), upper: .literal(.int(Int64(b)))),
                    { (a...b).contains($0.spec.weight) }
                )
            case 7:
                let tag = pick(["new", "sale", "Eco", "x"])
                return (
                    .any(.field(["tags"]), body: .compare(.equal, .element([]), .literal(.string(tag)))),
                    { $0.tags.contains(tag) }
                )
            case 8:
                let op = comparison()
                let date = now.addingTimeInterval(Double(Int.random(in: -80_000_000...80_000_000, using: &random)))
                return (
                    .compare(op, .field(["released"]), .literal(.date(date))), { Self.holds(op, $0.released, date) }
                )
            case 9:
                let list = (0..<Int.random(in: 1...4, using: &random)).map { _ in Int.random(in: 0...20, using: &random)
                }
                return (.isIn(.field(["stock"]), list.map { .literal(.int(Int64($0))) }), { list.contains($0.stock) })
            default:
                let op = comparison()
                let x = Double(Int.random(in: 0...50, using: &random)) / 10
                return (
                    .compare(op, .coalesce(.field(["rating"]), .literal(.double(2.5))), .literal(.double(x))),
                    { Self.holds(op, $0.rating ?? 2.5, x) }
                )
            }
        }

        mutating func predicate(depth: Int) -> (QueryNode, Check) {
            guard depth > 0, Int.random(in: 0..<3, using: &random) > 0 else { return leaf() }
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                let (a, f) = predicate(depth: depth - 1)
                let (b, g) = predicate(depth: depth - 1)
                return (.and([a, b]), { f($0) && g($0) })
            case 1:
                let (a, f) = predicate(depth: depth - 1)
                let (b, g) = predicate(depth: depth - 1)
                return (.or([a, b]), { f($0) || g($0) })
            default:
                let (a, f) = predicate(depth: depth - 1)
                return (.not(a), { !f($0) })
            }
        }
    }

    /// Makers longer than index keys keep, sharing their first 200 bytes: Gadget(maker, stock)
    /// cuts them to a prefix, so equality on them is re-checked and sorts tie on the prefix.
    static let longMakers = ["A", "B", "é", "B" + String(repeating: "z", count: 600)].map {
        String(repeating: "Acme ", count: 40) + $0
    }

    @Test func randomTextQueriesMatchBruteForce() throws {
        var generator = Generator(random: SeededGenerator(label: "text query oracle"))
        let container = try ModelContainer(
            for: Gadget.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = container.mainContext
        let gadgets = (0..<OracleScale.records(default: 2_000)).map { id in
            var gadget = Gadget.random(id: id, using: &generator.random)
            if Int.random(in: 0..<6, using: &generator.random) == 0 { gadget.maker = generator.pick(Self.longMakers) }
            return gadget
        }
        for gadget in gadgets { context.insert(gadget) }
        try context.save()

        var nonEmpty = 0
        var indexed = 0
        let rounds = OracleScale.queries(default: 300)
        for round in 0..<rounds {
            let (node, check) = generator.predicate(depth: 3)
            var text = "Gadget where \(node)"
            var expected = gadgets.filter(check)
            let sortKey = generator.pick(["stock", "price", "name", "released", "rating", "spec.weight"])
            let ascending = Bool.random(using: &generator.random)
            if Bool.random(using: &generator.random) {
                text += " sort by \(sortKey)\(ascending ? "" : " desc")"
                expected.sort { lhs, rhs in
                    let order = Self.compare(sortKey, lhs, rhs)
                    if order == .orderedSame { return lhs.id < rhs.id }
                    return (order == .orderedAscending) == ascending
                }
            }
            let offset = Int.random(in: 0...5, using: &generator.random)
            let limit = Int.random(in: 1...50, using: &generator.random)
            if Bool.random(using: &generator.random) {
                text += " limit \(limit) offset \(offset)"
                expected = Array(expected.dropFirst(offset).prefix(limit))
            }
            let query = try QueryParser.parse(text)
            if try !container.store.explain(query).hasPrefix("scan") { indexed += 1 }
            let rows = try container.store.run(query)
            let ids = rows.map { row in row.key.withUnsafeBytes { Int(storageKey: $0)! } }
            #expect(ids == expected.map(\.id), "round \(round): \(text)")
            if ids != expected.map(\.id) { break }
            if !ids.isEmpty && ids.count < gadgets.count { nonEmpty += 1 }
        }
        // The oracle means something only if predicates select some records but not all.
        #expect(nonEmpty > rounds / 2, "only \(nonEmpty) of \(rounds) queries selected a proper subset")
        // Gadget declares indexes: many queries must have been answered through them.
        #expect(indexed > rounds / 5, "only \(indexed) of \(rounds) queries used an index")
        print(
            "[text query oracle] \(gadgets.count) records, \(rounds) queries: \(nonEmpty) selected a proper,"
                + " non-empty subset; \(indexed) used an index")
    }

    static func compare(_ key: String, _ a: Gadget, _ b: Gadget) -> ComparisonResult {
        func order<T: Comparable>(_ x: T, _ y: T) -> ComparisonResult {
            x == y ? .orderedSame : (x < y ? .orderedAscending : .orderedDescending)
        }
        switch key {
        case "stock": return order(a.stock, b.stock)
        case "price": return order(a.price, b.price)
        case "name": return order(a.name, b.name)
        case "released": return order(a.released, b.released)
        case "spec.weight": return order(a.spec.weight, b.spec.weight)
        default:
            switch (a.rating, b.rating) {
            case (nil, nil): return .orderedSame
            case (nil, _): return .orderedAscending
            case (_, nil): return .orderedDescending
            case (let x?, let y?): return order(x, y)
            }
        }
    }
}
