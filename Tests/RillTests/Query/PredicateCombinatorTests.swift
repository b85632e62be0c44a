import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

@Suite struct PredicateCombinatorTests {
    let directory = TemporaryDirectory()

    @Test func combinedPredicatesAnswerLikeTheirParts() throws {
        var random = SeededGenerator(label: "combinators")
        let container = try ModelContainer(
            for: Gadget.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let gadgets = (0..<800).map { Gadget.random(id: $0, using: &random) }
        for gadget in gadgets { container.mainContext.insert(gadget) }
        try container.mainContext.save()
        let context = ModelContext(container)

        let cheap = #Predicate<Gadget> { $0.price < 100 }
        let inStock = #Predicate<Gadget> { $0.stock > 20 && $0.active }
        let acme = #Predicate<Gadget> { $0.maker == "Acme" }
        let cases: [(Predicate<Gadget>, (Gadget) -> Bool)] = [
            (cheap && inStock, { $0.price < 100 && $0.stock > 20 && $0.active }),
            (cheap || acme, { $0.price < 100 || $0.maker == "Acme" }),
            (!cheap, { !($0.price < 100) }),
            (!(cheap && acme) || inStock, { !($0.price < 100 && $0.maker == "Acme") || ($0.stock > 20 && $0.active) }),
        ]
        for (predicate, check) in cases {
            let expected = gadgets.filter(check).map(\.id).sorted()
            #expect(!expected.isEmpty)
            #expect(try context.fetch(FetchDescriptor(predicate: predicate)).map(\.id) == expected)
            #expect(try context.fetchCount(FetchDescriptor(predicate: predicate)) == expected.count)
        }
    }

    @Test func combinedPredicatesAreTranslatedAndIndexServed() throws {
        let cheap = #Predicate<Gadget> { $0.price < 100 }
        let inStock = #Predicate<Gadget> { $0.stock > 20 && $0.active }
        let translation = PredicateTranslator.translate(cheap && inStock)
        #expect(translation.isComplete)
        #expect(
            translation.node
                == .and([
                    .compare(.less, .field(["price"]), .literal(.double(100))),
                    .compare(.greater, .field(["stock"]), .literal(.int(20))),
                    .field(["active"]),
                ]))
        #expect(PredicateTranslator.translate(!cheap).isComplete)
        #expect(PredicateTranslator.translate(cheap || inStock).isComplete)

        let container = try ModelContainer(
            for: Gadget.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("plan")))
        var random = SeededGenerator(seed: 3)
        for id in 0..<100 { container.mainContext.insert(Gadget.random(id: id, using: &random)) }
        try container.mainContext.save()
        let plan = try container.mainContext.explain(FetchDescriptor(predicate: cheap && inStock))
        #expect(plan.hasPrefix("index Gadget("), "\(plan)")
    }
}
