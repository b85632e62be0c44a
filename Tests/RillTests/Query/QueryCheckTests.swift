import Foundation
import RillStorage
import RillTestSupport
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
        let store = try Store(directory: directory.path("mixed"), options: EnvironmentOptions(), create: true)
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
        guard case .map(let fields)? = store.recordShapes.withLock({ $0["Item"] }) else {
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
        let store = try Store(directory: directory.path("empty"), options: EnvironmentOptions(), create: true)
        _ = try store.registerEntity(named: "Note", identifierKind: .string)
        let query = try QueryParser.parse("Note where anything == 5 and any x ($.y > 1) sort by whatever")
        #expect(try store.run(query).isEmpty)
        _ = try store.explain(query)
        let live = try RecordLiveQuery(query, store: store) { _ in }
        #expect(live.results.rows.isEmpty)
    }
}
