import Foundation
import RillLocks
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Text queries checked against the entity's fields in the store: a mistyped field or a constant
/// of the wrong kind fails `run`, `explain` and a live query, while fields and kinds that only
/// some records have, and entities with nothing known, are accepted.
@Suite struct QueryCheckTests {
    let directory = TemporaryDirectory()

    func books() throws -> ModelContainer {
        let container = try ModelContainer(
            for: Book.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("books")))
        for (title, pages, read) in [("Dune", 412, true), ("Emma", 474, false), ("Ubik", 202, false)] {
            container.mainContext.insert(Book(title: title, author: "A", pages: pages, isRead: read))
        }
        try container.mainContext.save()
        return container
    }

    /// The error of `body`, which must throw a `RillError`.
    func error(_ body: () throws -> Void, _ label: String) -> RillError? {
        do {
            try body()
            Issue.record("\(label): no error")
            return nil
        } catch let error as RillError {
            return error
        } catch {
            Issue.record("\(label): \(error)")
            return nil
        }
    }

    @Test func mistypedFieldsAndMismatchedKindsFailQueriesExplainsAndLiveQueries() throws {
        let store = try books().store
        let cases: [(query: String, code: String, column: Int, message: String)] = [
            (#"Book where titel == "Emma""#, "unknownField", 12, #"Book has no field "titel" (did you mean title?"#),
            ("Book sort by priorty", "unknownField", 14, #"Book has no field "priorty""#),
            (#"Book where pages > "100""#, "kindMismatch", 12, "Book.pages is a number"),
            (#"Book where isRead == "false""#, "kindMismatch", 12, "Book.isRead is a Bool"),
        ]
        for (text, code, column, message) in cases {
            let query = try QueryParser.parse(text)
            for (name, attempt) in [
                ("run", { _ = try store.run(query) }),
                ("explain", { _ = try store.explain(query) }),
                ("live", { _ = try RecordLiveQuery(query, store: store) { _ in } }),
            ] as [(String, () throws -> Void)] {
                let failure = error(attempt, "\(name) \(text)")
                #expect(failure?.code.name == code, "\(name) \(text)")
                #expect(
                    failure?.message.hasPrefix("column \(column): ") == true,
                    "\(name) \(text): \(failure?.message ?? "")")
                #expect(failure?.message.contains(message) == true, "\(name) \(text): \(failure?.message ?? "")")
                let located = failure?.underlyingError as? QueryParseError
                #expect(located?.column == column && located?.text == text, "\(name) \(text)")
            }
        }
        // Well-typed queries over the same fields answer as before.
        let query = try QueryParser.parse(
            "Book where pages > 300.5 and isRead == false and rating == nil sort by title")
        #expect(try store.run(query).map { QueryEvaluator.read(["title"], from: $0.record) } == [.string("Emma")])
    }

    /// An entity written as JSON, so that its records can differ: `count` records, the first
    /// `count - 1` with an integer `v`, the last with a string `v` and a field no other has.
    func mixedStore(count: Int) throws -> Store {
        let store = try Store(directory: directory.path("mixed"), options: StoreOptions(), create: true)
        _ = try store.registerEntity(named: "Item", identifierKind: .integer)
        var lines = (0..<count - 1).map { #"{"id":\#($0),"v":\#($0)}"# }
        lines.append(#"{"id":\#(count - 1),"v":"x","late":"y"}"#)
        let changes = try lines.map {
            try JSONChange(json: JSONReader.parse(Array($0.utf8)), defaultOperation: .insert, defaultEntity: "Item")
        }
        _ = try store.commit(try store.prepare(changes), author: nil)
        return store
    }

    @Test func fieldsAndKindsThatOnlyLaterRecordsHaveAreAccepted() throws {
        // The shape is learned from the first 64 records; the last one is past them.
        let store = try mixedStore(count: 100)
        for text in [#"Item where v == "x""#, #"Item where late == "y""#, "Item where late != nil sort by late"] {
            let rows = try store.run(try QueryParser.parse(text))
            #expect(rows.map { QueryEvaluator.read(["id"], from: $0.record) } == [.int(99)], "\(text)")
        }
        #expect(try store.run(try QueryParser.parse("Item where v > 97")).count == 1)
        // What the last record showed is remembered with what writes take the entity to have.
        guard case .map(let fields)? = store.recordShapes.withLock({ $0.byEntity["Item"] }) else {
            Issue.record("no shape of Item remembered")
            return
        }
        #expect(fields.map(\.name) == ["id", "v", "late"])
        // A field no record has is still refused, with the fields there are.
        let failure = error({ _ = try store.run(try QueryParser.parse(#"Item where lat == "y""#)) }, "lat")
        #expect(failure?.code.name == "unknownField")
        #expect(failure?.message.contains(#"Item has no field "lat""#) == true, "\(failure?.message ?? "")")
    }

    @Test func anEntityWithNothingKnownAcceptsAnyField() throws {
        let store = try Store(directory: directory.path("empty"), options: StoreOptions(), create: true)
        _ = try store.registerEntity(named: "Note", identifierKind: .string)
        let query = try QueryParser.parse("Note where anything == 5 and any x ($.y > 1) sort by whatever")
        #expect(try store.run(query).isEmpty)
        _ = try store.explain(query)
        let live = try RecordLiveQuery(query, store: store) { _ in }
        #expect(live.results.rows.isEmpty)
    }

    /// Random records whose fields are sparse, of mixed kinds past the first 64, nested and in
    /// arrays; random tests of real, mistyped and missing fields with constants of every kind.
    /// Oracle: a refused query is one whose test has the same value on every record (it could
    /// never tell records apart), and a field refused as unknown is in no record; an accepted
    /// query answers as the test evaluated on every record.
    @Test func everyRefusalIsCertainOnRandomRecords() throws {
        var random = SeededGenerator(label: "query check oracle")
        let store = try Store(directory: directory.path("random"), options: StoreOptions(), create: true)
        _ = try store.registerEntity(named: "Thing", identifierKind: .integer)
        var records: [RecordValue] = []
        for id in 0..<200 {
            var fields = [
                RecordField(name: "id", value: .int(Int64(id))),
                RecordField(name: "n", value: .int(Int64.random(in: -5...5, using: &random))),
                RecordField(name: "s", value: .string(["a", "ab", "b", "5"].randomElement(using: &random)!)),
                RecordField(name: "b", value: .bool(Bool.random(using: &random))),
                RecordField(
                    name: "tags",
                    value: .array((0..<Int.random(in: 0...2, using: &random)).map { _ in .string("t") })),
                RecordField(
                    name: "obj",
                    value: .map([
                        RecordField(name: "x", value: .double(Double(Int.random(in: 0...3, using: &random)))),
                        RecordField(name: "y", value: .string("y")),
                    ])),
                RecordField(
                    name: "items",
                    value: .array(
                        (0..<Int.random(in: 0...2, using: &random)).map { _ in
                            .map([RecordField(name: "p", value: .int(Int64.random(in: 0...3, using: &random)))])
                        })),
            ]
            // Past the sample: a field few records have, and a field whose kind changes.
            if id >= 64, Int.random(in: 0..<20, using: &random) == 0 {
                fields.append(RecordField(name: "rare", value: .int(Int64.random(in: 0...2, using: &random))))
            }
            let mixed: RecordValue =
                id < 100 ? .int(Int64(id % 3)) : .string(["a", "1"].randomElement(using: &random)!)
            fields.append(RecordField(name: "mixed", value: mixed))
            records.append(.map(fields))
        }
        let changes = try records.map {
            try JSONChange(json: $0, defaultOperation: .insert, defaultEntity: "Thing")
        }
        _ = try store.commit(try store.prepare(changes), author: nil)

        let paths = [
            "n", "s", "b", "tags", "obj", "obj.x", "obj.y", "obj.z", "items.p", "rare", "mixed", "nope", "sx",
            "s.length",
        ]
        let constants = [
            "nil", "0", "1", "2.5", "\"1\"", "\"a\"", "true", "false", "2024-05-01",
            "3F2504E0-4F89-11D3-9A0C-0305E82C3301",
        ]
        var refused = 0
        var accepted = 0
        let rounds = 400
        for _ in 0..<rounds {
            let path = paths.randomElement(using: &random)!
            let constant = constants.randomElement(using: &random)!
            let op = ["==", "!=", "<", ">="].randomElement(using: &random)!
            let test: String
            // What a refusal is about: one comparison, which must have the same value wherever
            // it is evaluated (every record; in a quantifier, every element) — or, in an `in`
            // list, one candidate's.
            var judged: [(comparison: String, over: [RecordValue])]
            let field = ["p", "q"].randomElement(using: &random)!
            let elements = { (path: String) -> [RecordValue] in
                records.flatMap { record -> [RecordValue] in
                    let value = QueryEvaluator.read(path.split(separator: ".").map(String.init), from: record)
                    if case .array(let items) = value { return items }
                    return []
                }
            }
            switch Int.random(in: 0..<6, using: &random) {
            case 0:
                test = "any \(path) \(op) \(constant)"
                let items = elements(path).map { RecordValue.map([RecordField(name: "e", value: $0)]) }
                judged = items.isEmpty ? [(test, records)] : [("e \(op) \(constant)", items)]
            case 1:
                test = "\(path) contains \(constant)"
                judged = [(test, records)]
            case 2:
                test = "any items ($.\(field) \(op) \(constant))"
                judged = [("\(field) \(op) \(constant)", elements("items"))]
            case 3:
                test = "\(path) in [\(constant), 1]"
                judged = [("\(path) == \(constant)", records), ("\(path) == 1", records)]
            default:
                test = "\(path) \(op) \(constant)"
                judged = [(test, records)]
            }
            let query = try QueryParser.parse("Thing where \(test)")
            let predicate = try #require(query.predicate)
            let isConstant = try judged.contains { comparison, values in
                let node = try #require(try QueryParser.parse("Thing where \(comparison)").predicate)
                return Set(values.map { QueryEvaluator.matches(node, $0) }).count <= 1
            }
            do {
                let ids = try store.run(query).map { QueryEvaluator.read(["id"], from: $0.record) }
                let expected = records.filter { QueryEvaluator.matches(predicate, $0) }.map {
                    QueryEvaluator.read(["id"], from: $0)
                }
                #expect(ids == expected, "\(test)")
                accepted += 1
            } catch let error as RillError where error.code == .unknownField || error.code == .kindMismatch {
                refused += 1
                #expect(isConstant, "refused, but it tells records apart: \(test): \(error.message)")
            }
        }
        // Both outcomes must be common for the oracle to mean something.
        #expect(refused > rounds / 10 && accepted > rounds / 10, "\(refused) refused, \(accepted) accepted")
        print("[query check oracle] \(rounds) tests: \(refused) refused, \(accepted) accepted")
    }
}
