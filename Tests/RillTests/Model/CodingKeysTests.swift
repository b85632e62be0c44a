import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Models whose coding keys store properties under other names: predicates, sorts and indexes
/// read the stored names, and answer as Foundation's evaluation of the same predicate and sort.
@Suite struct CodingKeysTests {
    let directory = TemporaryDirectory()

    struct Address: Codable, Sendable, Equatable {
        var city: String
        var postalCode: Int
        enum CodingKeys: String, CodingKey {
            case city = "town"
            case postalCode = "zip"
        }
    }

    struct Person: PersistentModel, Equatable {
        var id: Int
        var fullName: String
        var age: Int
        var nick: String?
        var isActive: Bool
        var address: Address
        enum CodingKeys: String, CodingKey {
            case id
            case fullName = "full_name"
            case age = "years"
            case nick = "nickname"
            case isActive = "active"
            case address = "home"
        }
    }

    /// The same, with indexes on renamed fields.
    struct IndexedPerson: PersistentModel, Equatable {
        var id: Int
        var fullName: String
        var age: Int
        var nick: String?
        enum CodingKeys: String, CodingKey {
            case id
            case fullName = "full_name"
            case age = "years"
            case nick = "nickname"
        }
        static let indexes: [ModelIndex<IndexedPerson>] = [ModelIndex(\.age), ModelIndex(\.fullName)]
    }

    /// Two properties whose stored names are each other's; one computed when decoded.
    struct Swapped: PersistentModel, Equatable {
        var id: Int
        var left: Int
        var right: Int
        var doubled: Int
        enum CodingKeys: String, CodingKey {
            case id
            case left = "right"
            case right = "left"
            case doubled = "single"
        }
        init(id: Int, left: Int, right: Int, doubled: Int) {
            (self.id, self.left, self.right, self.doubled) = (id, left, right, doubled)
        }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(Int.self, forKey: .id)
            left = try container.decode(Int.self, forKey: .left)
            right = try container.decode(Int.self, forKey: .right)
            doubled = try container.decode(Int.self, forKey: .doubled) * 2
        }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(left, forKey: .left)
            try container.encode(right, forKey: .right)
            try container.encode(doubled / 2, forKey: .doubled)
        }
    }

    @Test func renamedFieldsAnswerAsFoundation() throws {
        var random = SeededGenerator(label: "coding keys")
        let container = try ModelContainer(
            for: Person.self, IndexedPerson.self, Swapped.self,
            configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = container.mainContext
        let names = ["Ann", "Bob", "Cy", "Dee", "Eve", "ann", "Émile"]
        var people: [Person] = []
        var swapped: [Swapped] = []
        for id in 0..<150 {
            let person = Person(
                id: id, fullName: names.randomElement(using: &random)!, age: Int.random(in: 0..<90, using: &random),
                nick: Bool.random(using: &random) ? nil : names.randomElement(using: &random)!,
                isActive: Bool.random(using: &random),
                address: Address(
                    city: ["Oslo", "Rome", "Lima"].randomElement(using: &random)!,
                    postalCode: Int.random(in: 1000..<1010, using: &random)))
            people.append(person)
            context.insert(person)
            context.insert(IndexedPerson(id: id, fullName: person.fullName, age: person.age, nick: person.nick))
            let pair = Swapped(
                id: id, left: Int.random(in: 0..<10, using: &random), right: Int.random(in: 0..<10, using: &random),
                doubled: 2 * Int.random(in: 0..<10, using: &random))
            swapped.append(pair)
            context.insert(pair)
        }
        try context.save()

        func check(_ predicate: Predicate<Person>, _ sortBy: [SortDescriptor<Person>] = [], limit: Int? = nil) throws {
            var descriptor = FetchDescriptor(predicate: predicate, sortBy: sortBy + [SortDescriptor(\.id)])
            descriptor.fetchLimit = limit
            let expected = try people.filter { try predicate.evaluate($0) }
                .sorted(using: sortBy + [SortDescriptor(\.id)]).prefix(limit ?? .max)
            #expect(try context.fetch(descriptor).map(\.id) == expected.map(\.id), "\(descriptor)")
            #expect(
                try context.fetchCount(FetchDescriptor(predicate: predicate))
                    == people.filter { try predicate.evaluate($0) }.count)
        }
        try check(#Predicate { $0.fullName == "Bob" })
        try check(#Predicate { $0.age > 25 }, [SortDescriptor(\.age, order: .reverse)], limit: 10)
        try check(#Predicate { $0.nick == nil })
        try check(#Predicate { $0.nick != nil && $0.isActive }, [SortDescriptor(\.fullName)])
        try check(#Predicate { $0.address.city == "Rome" && $0.address.postalCode >= 1005 })
        try check(#Predicate { _ in true }, [SortDescriptor(\.address.postalCode), SortDescriptor(\.age)], limit: 20)
        try check(#Predicate { !$0.isActive }, [SortDescriptor(\.nick)])

        // Indexed renamed fields: the plan uses the index, and the answers are the scan's.
        let indexedPeople = people.map { IndexedPerson(id: $0.id, fullName: $0.fullName, age: $0.age, nick: $0.nick) }
        var byAge = FetchDescriptor<IndexedPerson>(
            predicate: #Predicate { $0.age >= 30 && $0.age < 40 },
            sortBy: [SortDescriptor(\.age), SortDescriptor(\.id)])
        byAge.fetchLimit = 7
        #expect(
            try context.fetch(byAge).map(\.id)
                == indexedPeople.filter { $0.age >= 30 && $0.age < 40 }
                .sorted(using: [SortDescriptor(\.age), SortDescriptor(\.id)]).prefix(7).map(\.id))
        let plan = try context.explain(byAge)
        #expect(plan.contains("index IndexedPerson(years)"), "\(plan)")

        // Swapped names and a value computed when decoded: each property reads its own field,
        // and one that no field holds as it is is decided on the models.
        for limit in [nil, 3] {
            var descriptor = FetchDescriptor<Swapped>(
                predicate: #Predicate { $0.left > 4 && $0.doubled >= 10 },
                sortBy: [SortDescriptor(\.right), SortDescriptor(\.id)])
            descriptor.fetchLimit = limit
            let expected = swapped.filter { $0.left > 4 && $0.doubled >= 10 }
                .sorted(using: [SortDescriptor(\.right), SortDescriptor(\.id)]).prefix(limit ?? .max)
            #expect(try context.fetch(descriptor).map(\.id) == expected.map(\.id))
        }
        #expect(KeyPathNames.names(of: \Swapped.left, root: Swapped.self) == ["right"])
        #expect(KeyPathNames.names(of: \Swapped.doubled, root: Swapped.self) == nil)
        #expect(KeyPathNames.names(of: \Person.address.city, root: Person.self) == ["home", "town"])

        // A live query on renamed fields follows saves.
        let live = try LiveQuery(
            FetchDescriptor<Person>(predicate: #Predicate { $0.age < 10 }, sortBy: [SortDescriptor(\.id)]),
            in: container)
        context.insert(
            Person(
                id: 1_000, fullName: "New", age: 3, nick: nil, isActive: true,
                address: Address(city: "Oslo", postalCode: 1000)))
        try context.save()
        try live.catchUp()
        #expect(Array(live).map(\.id) == (people.filter { $0.age < 10 }.map(\.id) + [1_000]))
    }

    /// Coding keys holding the characters index names join paths with: each is one field.
    struct Punctuated: PersistentModel, Equatable {
        struct Place: Codable, Sendable, Equatable {
            var code: Int
            enum CodingKeys: String, CodingKey { case code = "c.d" }
        }
        var id: Int
        var name: String
        var tag: String
        var place: Place
        enum CodingKeys: String, CodingKey {
            case id
            case name = "a.b"
            case tag = "x,y\\z"
            case place = "p"
        }
        static let indexes: [ModelIndex<Punctuated>] = [
            ModelIndex(\.name), ModelIndex(\.place.code, \.name), .unique(\.tag, onConflict: .fail),
        ]
    }

    /// Key paths made anew at each use (appended at run time, each a new object, freed after
    /// use) name their own fields every time: the names are kept by key path identity too, and an
    /// address a freed key path had must not answer for another (the two alternate, so that each
    /// is likely made where the other was).
    @Test func keyPathsMadeAtRunTimeNameTheirOwnFields() {
        let home: KeyPath<Person, Address> = \Person.address
        // Each key path is made, named and freed before the next is made.
        func names(_ leaf: PartialKeyPath<Address>) -> [String]? {
            guard let path = (home as AnyKeyPath).appending(path: leaf as AnyKeyPath) else { return nil }
            return KeyPathNames.names(of: path, root: Person.self)
        }
        for round in 0..<5_000 {
            #expect(names(\Address.city) == ["home", "town"], "round \(round)")
            #expect(names(\Address.postalCode) == ["home", "zip"], "round \(round)")
        }
        // The literals, looked up again and again, keep their names too.
        for _ in 0..<3 {
            #expect(KeyPathNames.names(of: \Person.address.city, root: Person.self) == ["home", "town"])
            #expect(KeyPathNames.names(of: \Person.age, root: Person.self) == ["years"])
        }
    }

    @Test func indexesOnKeysWithDotsAndCommasServePlansAndHoldUniqueness() throws {
        #expect(FieldPath.name(of: [["a.b"], ["p", "c.d"], ["x,y\\z"]]) == #"a\.b,p.c\.d,x\,y\\z"#)
        #expect(FieldPath.paths(fromName: #"a\.b,p.c\.d,x\,y\\z"#) == [["a.b"], ["p", "c.d"], ["x,y\\z"]])
        #expect(FieldPath.paths(fromName: "author,address.city") == [["author"], ["address", "city"]])
        let url = directory.url.appendingPathComponent("store")
        let models = (0..<60).map { Punctuated(id: $0, name: "n\($0 % 6)", tag: "t\($0)", place: .init(code: $0 % 4)) }
        do {
            let context = try ModelContainer(for: Punctuated.self, configurations: ModelConfiguration(url: url))
                .mainContext
            for model in models { context.insert(model) }
            try context.save()
        }
        // Reopened: the catalog's index names read back as the same fields.
        let context = try ModelContainer(for: Punctuated.self, configurations: ModelConfiguration(url: url)).mainContext
        func check(_ predicate: Predicate<Punctuated>, index: String) throws {
            let descriptor = FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.id)])
            #expect(try context.fetch(descriptor) == models.filter { try predicate.evaluate($0) })
            let plan = try context.explain(descriptor)
            #expect(plan.contains("index Punctuated(\(index))"), "\(plan)")
        }
        try check(#Predicate { $0.name == "n2" }, index: #"a\.b"#)
        try check(#Predicate { $0.place.code == 3 && $0.name == "n3" }, index: #"p.c\.d,a\.b"#)
        try check(#Predicate { $0.tag == "t7" }, index: #"x\,y\\z"#)

        context.insert(Punctuated(id: 100, name: "new", tag: "t7", place: .init(code: 0)))
        let error = #expect(throws: RillError.self) { try context.save() }
        #expect(error?.code == .uniqueConflict)
        context.rollback()
        #expect(try context.fetchCount(FetchDescriptor<Punctuated>()) == models.count)
    }
}
