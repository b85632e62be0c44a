import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Model hierarchies: the kinds of a family share one entity; fetches of one kind are shallow,
/// fetches of the family deep. Random records of three kinds; every fetch against Swift's own
/// evaluation of the same predicate over all models, and against a brute force written apart.
@Suite struct ModelFamilyTests {
    let directory = TemporaryDirectory()

    typealias DeepCase = (predicate: Predicate<any Dish>?, check: @Sendable (any Dish) -> Bool, text: String)

    static func randomDeepCase(_ random: inout SeededGenerator) -> DeepCase {
        let k = Int.random(in: 0...130, using: &random)
        let r = Int.random(in: 0...9, using: &random)
        let name = Dishes.names.randomElement(using: &random)!
        let tag = ["sweet", "nut", "vegan"].randomElement(using: &random)!
        switch Int.random(in: 0..<16, using: &random) {
        case 0: return (#Predicate { $0 is Cake }, { $0 is Cake }, "is Cake")
        case 1: return (#Predicate { !($0 is Drink) }, { !($0 is Drink) }, "!(is Drink)")
        case 2: return (#Predicate { $0 is Cake || $0 is Soup }, { $0 is Cake || $0 is Soup }, "is Cake || is Soup")
        case 3:
            return (
                #Predicate { ($0 as? Cake)?.minutes ?? 0 > k }, { ($0 as? Cake)?.minutes ?? 0 > k },
                "(as? Cake).minutes > \(k)"
            )
        case 4:
            return (
                #Predicate { ($0 as? Drink)?.caffeinated == true }, { ($0 as? Drink)?.caffeinated == true },
                "(as? Drink).caffeinated"
            )
        case 5: return (#Predicate { $0.name == name }, { $0.name == name }, "name == \(name)")
        case 6: return (#Predicate { $0.rating > r }, { $0.rating > r }, "rating > \(r)")
        case 7:
            return (
                #Predicate { $0 is Soup && $0.rating >= r }, { $0 is Soup && $0.rating >= r },
                "is Soup && rating >= \(r)"
            )
        case 8:
            return (
                #Predicate { ($0 as? Cake)?.tags.contains(tag) == true }, { ($0 as? Cake)?.tags.contains(tag) == true },
                "(as? Cake).tags contains \(tag)"
            )
        case 9:
            return (
                #Predicate { ($0 as? Soup)?.spicy == true || ($0 as? Cake)?.minutes ?? 200 < k },
                { ($0 as? Soup)?.spicy == true || ($0 as? Cake)?.minutes ?? 200 < k },
                "(as? Soup).spicy || (as? Cake).minutes < \(k)"
            )
        case 10:
            return (
                #Predicate { $0 is Drink && $0.name != name }, { $0 is Drink && $0.name != name },
                "is Drink && name != \(name)"
            )
        case 14: return (#Predicate { $0.code > r }, { $0.rating + 1 > r }, "code > \(r)")
        case 12:
            return (#Predicate { $0 is any Warm }, { $0 is any Warm }, "is any Warm")
        case 13:
            return (
                #Predicate { ($0 as? any Warm)?.minutes ?? 0 > k }, { ($0 as? any Warm)?.minutes ?? 0 > k },
                "(as? any Warm).minutes > \(k)"
            )
        case 11:
            let text = "soup " + name
            return (#Predicate { $0.summary == text }, { $0.summary == text }, "summary == \(text)")
        default: return (nil, { _ in true }, "everything")
        }
    }

    static let deepSorts: [(descriptors: [SortDescriptor<any Dish>], text: String)] = [
        ([], "identifier"),
        ([SortDescriptor(\.name)], "name"),
        ([SortDescriptor(\.rating, order: .reverse), SortDescriptor(\.name)], "rating desc, name"),
    ]

    typealias CakeCase = (predicate: Predicate<Cake>?, check: @Sendable (Cake) -> Bool, text: String)

    static func randomCakeCase(_ random: inout SeededGenerator) -> CakeCase {
        let k = Int.random(in: 0...130, using: &random)
        let r = Int.random(in: 0...9, using: &random)
        let name = Dishes.names.randomElement(using: &random)!
        switch Int.random(in: 0..<6, using: &random) {
        case 0: return (#Predicate { $0.minutes > k }, { $0.minutes > k }, "minutes > \(k)")
        case 4:
            // A computed property: not translated, so the kind's test alone decides before decoding.
            return (#Predicate { $0.summary == name }, { $0.name == name }, "summary == \(name)")
        case 1: return (#Predicate { $0.rating == r }, { $0.rating == r }, "rating == \(r)")
        case 2:
            return (
                #Predicate { $0.name == name || $0.tags.isEmpty }, { $0.name == name || $0.tags.isEmpty },
                "name || no tags"
            )
        case 3:
            return (
                #Predicate { $0.tags.count > 1 || $0.minutes < k }, { $0.tags.count > 1 || $0.minutes < k },
                "tags > 1 || minutes < \(k)"
            )
        default: return (nil, { _ in true }, "every cake")
        }
    }

    private func open() throws -> ModelContainer {
        try ModelContainer(
            for: Cake.self, Drink.self, Soup.self,
            configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
    }

    @Test func randomDeepAndShallowFetchesMatchSwiftAndBruteForce() throws {
        var random = SeededGenerator(label: "family fetch oracle")
        let container = try open()
        let context = container.mainContext
        var saved: [Int: any Dish] = [:]
        let records = OracleScale.records(default: 600)
        for id in 0..<records {
            let dish = Dishes.random(id: id, using: &random)
            context.insert(dish)
            saved[id] = dish
        }
        try context.save()

        var indexed = 0
        let rounds = OracleScale.queries(default: 150)
        for round in 0..<rounds {
            context.rollback()
            var visible = saved
            if Int.random(in: 0..<3, using: &random) == 0 {
                // Unsaved changes, some of which give an identifier another kind.
                for _ in 0..<Int.random(in: 1...10, using: &random) {
                    let id = Int.random(in: 0..<(records + 20), using: &random)
                    let dish = Dishes.random(id: id, using: &random)
                    if Bool.random(using: &random) {
                        context.insert(dish)
                        visible[id] = dish
                    } else {
                        context.delete(dish)
                        visible[id] = nil
                    }
                }
            }
            let all = visible.values.sorted { $0.id < $1.id }

            // Deep.
            let deep = Self.randomDeepCase(&random)
            let sort = Self.deepSorts.randomElement(using: &random)!
            var descriptor = FamilyDescriptor<any Dish>(predicate: deep.predicate, sortBy: sort.descriptors)
            if Bool.random(using: &random) { descriptor.fetchLimit = Int.random(in: 0...30, using: &random) }
            if Bool.random(using: &random) { descriptor.fetchOffset = Int.random(in: 0...10, using: &random) }
            let order: (any Dish, any Dish) -> Bool = { lhs, rhs in
                for descriptor in sort.descriptors {
                    let order = descriptor.compare(lhs, rhs)
                    if order != .orderedSame { return order == .orderedAscending }
                }
                return lhs.id < rhs.id
            }
            let bySwift = try all.filter { try deep.predicate?.evaluate($0) ?? true }.sorted(by: order)
            let byHand = all.filter(deep.check).sorted(by: order)
            #expect(
                bySwift.map { $0.id } == byHand.map { $0.id }, "round \(round): the oracles disagree on \(deep.text)")
            let window = Array(bySwift.dropFirst(descriptor.fetchOffset ?? 0).prefix(descriptor.fetchLimit ?? .max))
            let fetched = try context.fetch(descriptor)
            let context =
                "round \(round): \(deep.text), sort \(sort.text), offset \(descriptor.fetchOffset ?? 0), limit \(descriptor.fetchLimit.map(String.init) ?? "none")"
            #expect(fetched.map { $0.id } == window.map { $0.id }, "\(context)")
            #expect(zip(fetched, window).allSatisfy { Dishes.same($0, $1) }, "\(context): kinds or fields differ")
            #expect(try self.context(container).fetchCount(descriptor) >= 0)
            #expect(try container.mainContext.fetchCount(descriptor) == window.count, "\(context): count")
            if try !container.mainContext.explain(descriptor).hasPrefix("scan") { indexed += 1 }

            // Shallow: cakes alone.
            let shallow = Self.randomCakeCase(&random)
            var cakes = FetchDescriptor<Cake>(
                predicate: shallow.predicate,
                sortBy: Bool.random(using: &random) ? [SortDescriptor(\.minutes), SortDescriptor(\.name)] : [])
            if Bool.random(using: &random) { cakes.fetchLimit = Int.random(in: 0...20, using: &random) }
            let cakeOrder: (Cake, Cake) -> Bool = { lhs, rhs in
                for descriptor in cakes.sortBy {
                    let order = descriptor.compare(lhs, rhs)
                    if order != .orderedSame { return order == .orderedAscending }
                }
                return lhs.id < rhs.id
            }
            let allCakes = all.compactMap { $0 as? Cake }
            let expectedCakes = try allCakes.filter { try shallow.predicate?.evaluate($0) ?? true }.sorted(
                by: cakeOrder)
            #expect(
                expectedCakes == allCakes.filter(shallow.check).sorted(by: cakeOrder), "round \(round): cake oracles")
            let cakeWindow = Array(expectedCakes.prefix(cakes.fetchLimit ?? .max))
            #expect(try container.mainContext.fetch(cakes) == cakeWindow, "round \(round): shallow \(shallow.text)")
            #expect(try container.mainContext.fetchCount(cakes) == cakeWindow.count, "round \(round): shallow count")
        }
        print(
            "[family fetch oracle] \(records) records of 3 kinds: \(rounds) deep and shallow fetches matched; \(indexed) deep ones used an index"
        )
    }

    private func context(_ container: ModelContainer) -> ModelContext { container.mainContext }

    @Test func kindTestsAndRequirementsAreTranslatedAndServedByIndexes() throws {
        let container = try open()
        let context = container.mainContext
        for id in 0..<40 {
            context.insert(Cake(id: id, name: "c\(id)", rating: id % 10, minutes: id, tags: []))
            context.insert(Drink(id: 100 + id, name: "d\(id)", rating: id % 10, caffeinated: id % 2 == 0, volume: nil))
        }
        try context.save()
        func plan(_ predicate: Predicate<any Dish>) throws -> String {
            try context.explain(FamilyDescriptor<any Dish>(predicate: predicate))
        }
        let isCake = try plan(#Predicate { $0 is Cake })
        #expect(isCake.hasPrefix("index Dish(kind)"), "\(isCake)")
        #expect(isCake.contains("filter: the translation"), "\(isCake)")
        // A requirement every kind stores in one field reads that field, through its index.
        let rating = try plan(#Predicate { $0.rating > 7 })
        #expect(rating.hasPrefix("index Dish(rating)"), "\(rating)")
        #expect(rating.contains("translated: rating > 7"), "\(rating)")
        // A cast reads the kind's field under its test.
        let minutes = try plan(#Predicate { ($0 as? Cake)?.minutes ?? 0 > 30 })
        #expect(minutes.contains("filter: the translation"), "\(minutes)")
        // A protocol some kinds conform to is those kinds' test; a field read through a cast to
        // it is the field those kinds store it in.
        let warm = try plan(#Predicate { ($0 as? any Warm)?.minutes ?? 0 > 30 })
        #expect(warm.contains("filter: the translation") && warm.contains("minutes"), "\(warm)")
        #expect(try plan(#Predicate { $0 is any Warm }).hasPrefix("index Dish(kind)"))
        #expect(try context.fetchCount(FamilyDescriptor<any Dish>(predicate: #Predicate { $0 is any Warm })) == 40)
        // A computed property of one kind that reads one stored field reads that field.
        let summary1 = try plan(#Predicate { ($0 as? Cake)?.summary == "c1" })
        #expect(summary1.contains("filter: the translation"), "\(summary1)")
        // A field plus a constant is not taken for the field the probe's numbers happen to give.
        let code = try plan(#Predicate { $0.code > 5 })
        #expect(code.contains("residual: the whole predicate"), "\(code)")
        #expect(try context.fetchCount(FamilyDescriptor<any Dish>(predicate: #Predicate { $0.code > 5 })) == 40)
        // A requirement one kind computes otherwise is evaluated on the models.
        let summary = try plan(#Predicate { $0.summary == "soup c1" })
        #expect(summary.contains("residual: the whole predicate"), "\(summary)")
        #expect(try context.fetch(FamilyDescriptor<any Dish>(predicate: #Predicate { $0.summary == "c1" })).count == 1)
        // A shallow fetch with no predicate is the kind's test alone, counted from the index.
        let cakes = try context.explain(FetchDescriptor<Cake>())
        #expect(cakes.hasPrefix("index Dish(kind)"), "\(cakes)")
        #expect(try context.fetchCount(FetchDescriptor<Cake>()) == 40)
        #expect(try context.fetchCount(FamilyDescriptor<any Dish>()) == 80)
        #expect(try context.model(Drink.self, id: 3) == nil)
        #expect(try context.model(Cake.self, id: 3)?.minutes == 3)
    }

    @Test func theSchemaRecordsTheFamily() throws {
        let container = try open()
        let schema = try #require(try container.store.schema(of: "Dish"))
        let family = try #require(schema.family)
        #expect(family.discriminator == "kind")
        #expect(family.kinds.map(\.name) == ["Cake", "Drink", "Soup"])
        guard case .map(let fields) = schema.kinds else {
            Issue.record("no fields")
            return
        }
        #expect(
            fields.map(\.name) == ["kind", "id", "name", "rating", "minutes", "tags", "caffeinated", "volume", "spicy"])
        // A field some kind lacks is optional in the union.
        #expect(Set(schema.optional) == ["minutes", "tags", "caffeinated", "volume", "spicy"])
        #expect(schema.indexes == ["kind", "minutes", "rating"])
        // A record is held to the fields of the kind it names.
        let cake = RecordValue.map([
            RecordField(name: "kind", value: .string("Cake")), RecordField(name: "id", value: .int(1)),
            RecordField(name: "name", value: .string("a")), RecordField(name: "rating", value: .int(1)),
            RecordField(name: "tags", value: .array([])),
        ])
        #expect(schema.problems(of: cake).count == 1)
        var pie = cake
        if case .map(var parts) = pie {
            parts[0].value = .string("Pie")
            pie = .map(parts)
        }
        #expect(schema.problems(of: pie).first?.contains("not one of the family's kinds") == true)
        // Registered again, the same family changes nothing.
        let again = try open()
        #expect(try again.store.schema(of: "Dish")?.version == schema.version)

        // The command line: the schema shows the family; the text query language reads the
        // discriminator as a field; a JSON write names its kind; the check holds each record to
        // its kind's fields.
        let context = again.mainContext
        context.insert(Cake(id: 1, name: "tart", rating: 3, minutes: 30, tags: ["nut"]))
        context.insert(Drink(id: 2, name: "Tea", rating: 5, caffeinated: true, volume: nil))
        try context.save()
        let path = directory.url.appendingPathComponent("store").path
        let printed = try runBuilt("rill", ["schema", path, "Dish"])
        #expect(printed.status == 0)
        #expect(
            printed.output.contains(
                "  family: the kind in `kind`, one of\n    Cake: id, name, rating, minutes, tags\n"),
            "\(printed.output)")
        let query = try runBuilt("rill", ["query", "--json", path, #"Dish where kind == "Drink""#])
        #expect(
            query.status == 0 && query.output.contains(#""name":"Tea""#) && !query.output.contains("tart"),
            "\(query.output)")
        let write = try runBuilt(
            "rill",
            ["insert", path, "Dish", #"{"id":3,"kind":"Soup","name":"Pho","rating":7,"minutes":20,"spicy":true}"#])
        #expect(write.status == 0, "\(write.error)")
        #expect(try context.model(Soup.self, id: 3)?.spicy == true)
        #expect(try runBuilt("rill", ["check", path]).status == 0)
        let forged = try runBuilt(
            "rill", ["insert", path, "Dish", #"{"id":4,"kind":"Pie","name":"pecan","rating":1}"#])
        #expect(forged.status == 0, "\(forged.error)")
        let check = try runBuilt("rill", ["check", path])
        #expect(check.status != 0 && check.output.contains("not one of the family's kinds"), "\(check.output)")
    }
}

/// A family the container refuses: each problem names the kind and what is wrong.
@Suite struct ModelFamilyConfigurationTests {
    let directory = TemporaryDirectory()

    protocol Shape: PersistentModel where ID == Int {}

    struct Square: Shape {
        var id: Int
        var side: Int
        static var family: ModelFamily? { ModelFamilyConfigurationTests.clashing }
    }

    /// Has a field named as the discriminator.
    struct Circle: Shape {
        var id: Int
        var kind: String
        static var family: ModelFamily? { ModelFamilyConfigurationTests.clashing }
    }

    static let clashing = ModelFamily(of: (any Shape).self, entityName: "Shape", kinds: Square.self, Circle.self)

    /// Not listed in the family it names.
    struct Stray: Shape {
        var id: Int
        static var family: ModelFamily? { ModelFamilyConfigurationTests.clashing }
    }

    struct Token: PersistentModel {
        var id: String
        static var family: ModelFamily? { ModelFamilyConfigurationTests.mixed }
    }

    struct Counter: PersistentModel {
        var id: Int
        static var family: ModelFamily? { ModelFamilyConfigurationTests.mixed }
    }

    static let mixed = ModelFamily(of: (any PersistentModel).self, entityName: "Mixed", kinds: Token.self, Counter.self)

    private func refusal(_ types: any PersistentModel.Type...) -> String? {
        do {
            _ = try ModelContainer(
                for: types, configurations: [ModelConfiguration(url: directory.url.appendingPathComponent("store"))])
            return nil
        } catch let error as RillError {
            #expect(error.code == .invalidConfiguration)
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func aKindWithTheDiscriminatorsNameIsRefused() {
        let message = refusal(Square.self, Circle.self)
        #expect(message?.contains("Circle has a field `kind`") == true, "\(message ?? "accepted")")
    }

    @Test func aKindTheFamilyDoesNotListIsRefused() {
        let message = refusal(Stray.self)
        #expect(message?.contains("does not list it") == true, "\(message ?? "accepted")")
    }

    @Test func kindsWithDifferentIdentifiersAreRefused() {
        let message = refusal(Token.self, Counter.self)
        #expect(message?.contains("different identifier types") == true, "\(message ?? "accepted")")
    }

    /// Declares a unique index, which the kinds of a family cannot yet.
    struct Triangle: Shape {
        var id: Int
        var name: String
        static var family: ModelFamily? { ModelFamilyConfigurationTests.unique }
        static let indexes: [ModelIndex<Triangle>] = [.unique(\.name)]
    }

    static let unique = ModelFamily(of: (any Shape).self, entityName: "Polygon", kinds: Triangle.self)

    @Test func aKindWithAUniqueIndexIsRefused() {
        let message = refusal(Triangle.self)
        #expect(message?.contains("declares a unique index") == true, "\(message ?? "accepted")")
    }

    @Test func kindsShareTheFamilysEntityName() {
        #expect(Square.entityName == "Shape" && Circle.entityName == "Shape")
        #expect(Cake.entityName == "Dish" && Cake.kindTest != nil)
        #expect(ModelFamilyTests.Plain.entityName == "Plain" && ModelFamilyTests.Plain.kindTest == nil)
    }
}

extension ModelFamilyTests {
    struct Plain: PersistentModel {
        var id: Int
    }
}
