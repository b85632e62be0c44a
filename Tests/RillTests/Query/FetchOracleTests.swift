import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Typed fetches against brute force: random `#Predicate`s, sorts, limits and offsets over a store
/// whose model declares indexes, with unsaved changes in the context some of the time. Results
/// must equal filtering and sorting every model in Swift, in the same order.
@Suite struct FetchOracleTests {
    let directory = TemporaryDirectory()

    typealias Case = (predicate: Predicate<Gadget>?, check: @Sendable (Gadget) -> Bool, text: String)

    static func randomCase(_ random: inout SeededGenerator) -> Case {
        let k = Int.random(in: -5...200, using: &random)
        let j = Int.random(in: k...210, using: &random)
        let x = Double(Int.random(in: -500...50_000, using: &random)) / 100
        let maker: String? = (["Acme", "acmé", "Bolt", nil] + TextQueryOracleTests.longMakers).randomElement(
            using: &random)!
        let tag = ["new", "sale", "Eco", "x"].randomElement(using: &random)!
        let needle = ["ca", "fé", "Mö", "z"].randomElement(using: &random)!
        let weight = Int.random(in: 0...1000, using: &random)
        let list = (0..<Int.random(in: 1...5, using: &random)).map { _ in Int.random(in: 0...30, using: &random) }
        let date = Date(timeIntervalSince1970: Double(Int.random(in: 1_600_000_000...1_800_000_000, using: &random)))
        switch Int.random(in: 0..<13, using: &random) {
        case 0: return (#Predicate { $0.stock > k }, { $0.stock > k }, "stock > \(k)")
        case 1:
            return (
                #Predicate { $0.stock >= k && $0.stock < j }, { $0.stock >= k && $0.stock < j }, "stock in [\(k), \(j))"
            )
        case 2:
            return (
                #Predicate { $0.price <= x && $0.active }, { $0.price <= x && $0.active }, "price <= \(x) && active"
            )
        case 3:
            return (
                #Predicate { $0.maker == maker && $0.stock > k }, { $0.maker == maker && $0.stock > k },
                "maker == \(maker ?? "nil") && stock > \(k)"
            )
        case 4: return (#Predicate { list.contains($0.stock) }, { list.contains($0.stock) }, "stock in \(list)")
        case 5: return (#Predicate { $0.rating != nil }, { $0.rating != nil }, "rating != nil")
        case 6:
            return (
                #Predicate { ($0.rating ?? 2.5) > x / 100 }, { ($0.rating ?? 2.5) > x / 100 },
                "(rating ?? 2.5) > \(x / 100)"
            )
        case 7: return (#Predicate { $0.released > date }, { $0.released > date }, "released > \(date)")
        case 8: return (#Predicate { $0.tags.contains(tag) }, { $0.tags.contains(tag) }, "tags contains \(tag)")
        case 9:
            return (
                #Predicate { $0.name.contains(needle) || $0.stock < k }, { $0.name.contains(needle) || $0.stock < k },
                "name contains \(needle) || stock < \(k)"
            )
        case 10:
            return (
                #Predicate { !$0.active && $0.spec.weight > weight }, { !$0.active && $0.spec.weight > weight },
                "!active && weight > \(weight)"
            )
        case 11:
            return (
                #Predicate { $0.stock > k || $0.price < x }, { $0.stock > k || $0.price < x },
                "stock > \(k) || price < \(x)"
            )
        default: return (nil, { _ in true }, "everything")
        }
    }

    static let sorts: [(descriptors: [SortDescriptor<Gadget>], text: String)] = [
        ([], "identifier"),
        ([SortDescriptor(\.stock)], "stock"),
        ([SortDescriptor(\.price, order: .reverse)], "price desc"),
        ([SortDescriptor(\.released)], "released"),
        ([SortDescriptor(\.rating)], "rating"),
        ([SortDescriptor(\.spec.weight, order: .reverse), SortDescriptor(\.name)], "weight desc, name"),
        ([SortDescriptor(\.maker), SortDescriptor(\.stock)], "maker, stock"),
    ]

    @Test func randomFetchesMatchBruteForce() throws {
        var random = SeededGenerator(label: "fetch oracle")
        let container = try ModelContainer(
            for: Gadget.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = container.mainContext
        var saved: [Int: Gadget] = [:]
        let records = OracleScale.records(default: 1_500)
        for id in 0..<records {
            var gadget = Gadget.random(id: id, using: &random)
            if Int.random(in: 0..<6, using: &random) == 0 {
                gadget.maker = TextQueryOracleTests.longMakers.randomElement(using: &random)!
            }
            context.insert(gadget)
            saved[id] = gadget
        }
        try context.save()

        var indexed = 0
        let rounds = OracleScale.queries(default: 150)
        for round in 0..<rounds {
            // Sometimes leave unsaved changes in the context: fetches must see them.
            context.rollback()
            var visible = saved
            if Int.random(in: 0..<3, using: &random) == 0 {
                for _ in 0..<Int.random(in: 1...20, using: &random) {
                    let id = Int.random(in: 0..<(records + records / 30), using: &random)
                    if Bool.random(using: &random) {
                        let gadget = Gadget.random(id: id, using: &random)
                        context.insert(gadget)
                        visible[id] = gadget
                    } else {
                        context.delete(Gadget.random(id: id, using: &random))
                        visible[id] = nil
                    }
                }
            }
            let (predicate, check, text) = Self.randomCase(&random)
            let sort = Self.sorts.randomElement(using: &random)!
            var descriptor = FetchDescriptor<Gadget>(predicate: predicate, sortBy: sort.descriptors)
            if Bool.random(using: &random) { descriptor.fetchLimit = Int.random(in: 0...40, using: &random) }
            if Bool.random(using: &random) { descriptor.fetchOffset = Int.random(in: 0...10, using: &random) }

            let expected = visible.values.filter(check).sorted { lhs, rhs in
                for descriptor in sort.descriptors {
                    let order = descriptor.compare(lhs, rhs)
                    if order != .orderedSame { return order == .orderedAscending }
                }
                return lhs.id < rhs.id
            }
            let window = Array(expected.dropFirst(descriptor.fetchOffset ?? 0).prefix(descriptor.fetchLimit ?? .max))
            let fetched = try context.fetch(descriptor)
            #expect(
                fetched.map(\.id) == window.map(\.id),
                "round \(round): \(text), sort \(sort.text), offset \(descriptor.fetchOffset ?? 0), limit \(descriptor.fetchLimit.map(String.init) ?? "none")"
            )
            #expect(try context.fetchCount(descriptor) == window.count)
            if try !context.explain(descriptor).hasPrefix("scan") { indexed += 1 }
            if fetched.map(\.id) != window.map(\.id) { break }
        }
        print("[fetch oracle] \(records) records: \(rounds) fetches matched brute force; \(indexed) used an index")
    }
}
