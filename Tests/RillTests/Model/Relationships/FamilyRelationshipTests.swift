import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// A plain model the kinds of a family reference.
struct SpiceJar: PersistentModel, Equatable {
    var id: Int
    var name: String
}

protocol SpicedDish: PersistentModel where ID == Int {
    var title: String { get }
    var spices: [Reference<SpiceJar>] { get }
}

struct SpicedCurry: SpicedDish {
    var id: Int
    var title: String
    var spices: [Reference<SpiceJar>]
    var heat: Int
    static var family: ModelFamily? { dishFamily }
    static let relationships: [ModelRelationship<SpicedCurry>] = [.references(\.spices)]
}

struct SpicedSoup: SpicedDish {
    var id: Int
    var title: String
    var spices: [Reference<SpiceJar>]
    var isCold: Bool
    static var family: ModelFamily? { dishFamily }
    static let relationships: [ModelRelationship<SpicedSoup>] = [.references(\.spices)]
}

struct SpicedStew: SpicedDish {
    var id: Int
    var title: String
    var spices: [Reference<SpiceJar>]
    static var family: ModelFamily? { mixedFamily }
}

let dishFamily = ModelFamily(of: (any SpicedDish).self, entityName: "Dish", kinds: SpicedCurry.self, SpicedSoup.self)
let mixedFamily = ModelFamily(of: (any SpicedDish).self, entityName: "Mixed", kinds: SpicedStew.self, SpicedBake.self)

/// A kind of the mixed family that declares a relationship its other kind does not.
struct SpicedBake: SpicedDish {
    var id: Int
    var title: String
    var spices: [Reference<SpiceJar>]
    static var family: ModelFamily? { mixedFamily }
    static let relationships: [ModelRelationship<SpicedBake>] = [.references(\.spices)]
}

/// The kinds of a family with a relationship: deep predicates that look through it, against a
/// brute force over the data and Swift's own evaluation on models whose references are read.
@Suite struct FamilyRelationshipTests {
    let directory = TemporaryDirectory()

    @Test func deepPredicatesLookThroughTheKindsRelationship() throws {
        var random = SeededGenerator(label: "family relationships")
        let container = try ModelContainer(
            for: [SpiceJar.self, SpicedCurry.self, SpicedSoup.self],
            configurations: [ModelConfiguration(url: directory.url.appendingPathComponent("s"))])
        let context = container.mainContext
        let names = ["cumin", "chili", "clove", "mace", "saffron", "sumac"]
        var spices: [Int: SpiceJar] = [:]
        for id in 0..<names.count * 2 {
            let spice = SpiceJar(id: id, name: "\(names[id % names.count]) \(id / names.count)")
            spices[id] = spice
            context.insert(spice)
        }
        var dishes: [any SpicedDish] = []
        for id in 0..<80 {
            let picked = spices.keys.filter { _ in Int.random(in: 0..<4, using: &random) == 0 }.sorted()
                .map { Reference<SpiceJar>($0) }
            let dish: any SpicedDish =
                Bool.random(using: &random)
                ? SpicedCurry(id: id, title: "curry \(id)", spices: picked, heat: Int.random(in: 0...5, using: &random))
                : SpicedSoup(id: id, title: "soup \(id)", spices: picked, isCold: Bool.random(using: &random))
            dishes.append(dish)
            context.insert(dish)
        }
        try context.save()

        // Swift's own evaluation: the models with their references read.
        func read(_ references: [Reference<SpiceJar>]) -> [Reference<SpiceJar>] {
            references.map { reference in
                var read = reference
                read.model = spices[reference.id]
                return read
            }
        }
        func resolved(_ dish: any SpicedDish) -> any SpicedDish {
            if var curry = dish as? SpicedCurry {
                curry.spices = read(curry.spices)
                return curry
            }
            if var soup = dish as? SpicedSoup {
                soup.spices = read(soup.spices)
                return soup
            }
            return dish
        }
        for _ in 0..<20 {
            let word = names.randomElement(using: &random)!
            let heat = Int.random(in: 0...5, using: &random)
            func check(
                _ predicate: Predicate<any SpicedDish>, _ label: String, _ expected: (any SpicedDish) -> Bool
            ) throws {
                let fetched = try context.fetch(FamilyDescriptor(predicate: predicate)).map { $0.id }.sorted()
                let swift = try dishes.filter { try predicate.evaluate(resolved($0)) }.map { $0.id }.sorted()
                let brute = dishes.filter(expected).map { $0.id }.sorted()
                #expect(fetched == brute, "\(label) with \(word), \(heat), seed \(random.seed)")
                #expect(fetched == swift, "\(label) with \(word), \(heat), seed \(random.seed)")
                #expect(try context.fetchCount(FamilyDescriptor(predicate: predicate)) == brute.count)
            }
            let spiced = #Predicate<any SpicedDish> { dish in
                dish.spices.contains { spice in spice.model.flatMap { $0.name.contains(word) } ?? false }
            }
            try check(spiced, "spiced") { dish in dish.spices.contains { spices[$0.id]!.name.contains(word) } }
            let soups = #Predicate<any SpicedDish> { $0 is SpicedSoup }
            try check(soups && spiced, "spiced soups") { dish in
                dish is SpicedSoup && dish.spices.contains { spices[$0.id]!.name.contains(word) }
            }
            let plain = #Predicate<any SpicedDish> { $0.spices.isEmpty }
            try check(plain || spiced, "plain or spiced") { dish in
                dish.spices.isEmpty || dish.spices.contains { spices[$0.id]!.name.contains(word) }
            }
        }
        // The relationship is the entity's: deleting a spice removes it from every kind's records.
        context.delete(spices[0]!)
        try context.save()
        let left = try context.fetch(FamilyDescriptor<any SpicedDish>())
        #expect(left.allSatisfy { !$0.spices.contains(Reference(0)) })
    }

    @Test func kindsThatDeclareOtherRelationshipsAreRefused() throws {
        let error = #expect(throws: RillError.self) {
            _ = try ModelContainer(
                for: [SpiceJar.self, SpicedStew.self, SpicedBake.self],
                configurations: [ModelConfiguration(url: directory.url.appendingPathComponent("m"))])
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains("the same") == true, "\(error?.message ?? "")")
    }
}
