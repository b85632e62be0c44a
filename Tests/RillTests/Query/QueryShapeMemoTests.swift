import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Text queries of one shape share a check and a plan (`QueryShapeMemo`): whatever values come
/// in what order, each query answers as it does alone, and is refused exactly when it is alone.
@Suite struct QueryShapeMemoTests {
    let directory = TemporaryDirectory()

    struct Ticket: PersistentModel {
        var id: Int
        var owner: UUID
        var seats: Int
        var note: String

        static let indexes: [ModelIndex<Ticket>] = [ModelIndex(\.owner), ModelIndex(\.seats)]
    }

    /// Random values of queries of a few shapes, extremes among them, on gadgets with indexes on
    /// most fields. Oracles: the same query forced to a full scan on the same store (rows and
    /// order), and the same query on another `Store` of the same file, whose memo is empty
    /// (refused or not, and the rows).
    @Test func queriesOfOneShapeAnswerAsEachDoesAlone() throws {
        var random = SeededGenerator(label: "query shape memo")
        let path = directory.path("gadgets")
        let container = try ModelContainer(
            for: Gadget.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        for id in 0..<300 { container.mainContext.insert(Gadget.random(id: id, using: &random)) }
        try container.mainContext.save()
        let store = container.store

        let integers: [Int64] = [.min, .min + 1, -1, 0, 1, 5, 50, 99, 150, 200, .max - 1, .max]
        let doubles: [Double] = [
            -.greatestFiniteMagnitude, -1e300, -0.5, -0.0, 0.0, .leastNonzeroMagnitude, 0.5, 9.99, 49.5, 120.25,
            1e300, .greatestFiniteMagnitude,
        ]
        func integer() -> String {
            Bool.random(using: &random)
                ? "\(integers.randomElement(using: &random)!)" : "\(Int.random(in: -10...210, using: &random))"
        }
        func double() -> String {
            let value =
                Bool.random(using: &random)
                ? doubles.randomElement(using: &random)! : Double(Int.random(in: -500...50_000, using: &random)) / 100
            return "\(value)"
        }
        func number() -> String { Bool.random(using: &random) ? integer() : double() }
        func text() -> String {
            ["\"\"", "\"a\"", "\"Acme\"", "\"café\"", "\"zz\"", "\"3F2504E0-4F89-11D3-9A0C-0305E82C3301\""]
                .randomElement(using: &random)!
        }
        let shapes: [() -> String] = [
            { "Gadget where stock == \(integer())" },
            { "Gadget where stock > \(number()) sort by stock limit \(Int.random(in: 0...30, using: &random))" },
            { "Gadget where stock < \(number()) sort by stock desc limit 5" },
            { "Gadget where price >= \(number()) and price < \(number())" },
            { "Gadget where \(number()) < price sort by price desc, id limit 7 offset 2" },
            { "Gadget where maker == \(text()) and stock > \(integer())" },
            { "Gadget where maker == \(text()) sort by stock" },
            { "Gadget where stock in [\(integer()), \(integer()), \(number())]" },
            { "Gadget where stock between \(number()) and \(number()) sort by price" },
            { "Gadget where rating > \(number()) or rating == nil" },
            { "Gadget where spec.weight >= \(integer()) and active == \(Bool.random(using: &random))" },
            { "Gadget where name contains \(text()) and stock != \(integer())" },
            // Constants of kinds that do and do not compare with the field, in one place.
            { "Gadget where stock > \(Bool.random(using: &random) ? number() : text())" },
            { "Gadget where price == \(Bool.random(using: &random) ? number() : "\(Bool.random(using: &random))")" },
        ]
        var refused = 0
        for _ in 0..<400 {
            let text = shapes.randomElement(using: &random)!()
            let query = try QueryParser.parse(text)
            let alone = try Store(directory: path, options: StoreOptions(), create: false)
            let expected = Result { try alone.run(query).map(\.key) }
            let found = Result { try store.run(query).map(\.key) }
            switch (expected, found) {
            case (.success(let expected), .success(let found)):
                #expect(found == expected, "\(text)")
                #expect(try store.run(query, forceScan: true).map(\.key) == found, "\(text)")
            case (.failure(let expected), .failure(let found)):
                refused += 1
                #expect("\(found)" == "\(expected)", "\(text)")
            default:
                Issue.record("\(text): alone \(expected.map(\.count)), after others \(found.map(\.count))")
            }
        }
        #expect(refused > 0, "the shapes with a constant of the wrong kind are refused")
    }

    /// A string that spells a UUID compares with a UUID field, and one that does not is refused:
    /// the shapes differ, whichever comes first, however often.
    @Test func aStringThatSpellsAUUIDIsAShapeOfItsOwn() throws {
        let container = try ModelContainer(
            for: Ticket.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("tickets")))
        let owner = UUID(uuidString: "3F2504E0-4F89-11D3-9A0C-0305E82C3301")!
        container.mainContext.insert(Ticket(id: 1, owner: owner, seats: 2, note: "a"))
        container.mainContext.insert(Ticket(id: 2, owner: UUID(), seats: 3, note: "b"))
        try container.mainContext.save()
        let store = container.store
        let spelled = #"Ticket where owner == "3F2504E0-4F89-11D3-9A0C-0305E82C3301""#
        let plain = #"Ticket where owner == "someone""#
        let number = "Ticket where seats > 2"
        let quoted = #"Ticket where seats > "2""#
        for _ in 0..<3 {
            for (text, refusal) in [(spelled, nil), (plain, "kindMismatch"), (number, nil), (quoted, "kindMismatch")] {
                do {
                    let rows = try store.run(try QueryParser.parse(text))
                    #expect(refusal == nil, "\(text) answered \(rows.count) rows")
                    #expect(rows.count == 1, "\(text)")
                } catch let error as RillError {
                    #expect(error.code.name == refusal, "\(text): \(error)")
                }
            }
        }
    }

    /// A shape that passed its check is checked again once what the store knows of the entity's
    /// records changes: here the field it reads leaves every record.
    @Test func aChangeOfTheRecordShapesChecksAgain() throws {
        let store = try Store(directory: directory.path("items"), options: StoreOptions(), create: true)
        _ = try store.registerEntity(named: "Item", identifierKind: .integer)
        func write(_ lines: [String], operation: JSONChange.Operation = .insert) throws {
            let changes = try lines.map {
                try JSONChange(
                    json: JSONReader.parse(Array($0.utf8)), defaultOperation: operation, defaultEntity: "Item")
            }
            _ = try store.commit(try store.prepare(changes), author: nil)
        }
        try write([#"{"id":1,"a":1}"#])
        let query = try QueryParser.parse("Item where a == 1")
        for _ in 0..<2 { #expect(try store.run(query).count == 1) }
        // The record goes, another without `a` comes, and the shape is learned anew from it.
        try write([#"{"id":1}"#], operation: .delete)
        try write([#"{"id":2,"b":"x"}"#])
        _ = try store.recordShape(of: try #require(try store.entity(named: "Item")), declared: [:], fresh: true)
        #expect(throws: RillError.self) { try store.run(query) }
        #expect(try store.run(try QueryParser.parse(#"Item where b == "x""#)).count == 1)
    }
}
