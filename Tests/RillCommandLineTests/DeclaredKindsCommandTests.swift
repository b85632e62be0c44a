import Foundation
import RillStorage
import RillTestSupport
import Testing

@testable import Rill

/// The field kinds an import's description declares, as real processes see them: a description the
/// stored records or the model's schema contradict is refused and changes nothing, `rill check`
/// holds the records to the declared kinds, and a kind is written as `rill schema` prints it too.
@Suite struct DeclaredKindsCommandTests {
    let directory = TemporaryDirectory()

    func rill(_ arguments: [String], input: String? = nil) throws -> ProcessRun {
        try runBuilt("rill", arguments, input: input)
    }

    static let itemDescription = #"{"entity":"Item","identifier":"Int","fields":{"id":"int","name":"string"}}"#

    static func item(_ id: Int, name: String) -> String {
        #"{"op":"insert","entity":"Item","record":{"id":\#(id),"name":\#(name)}}"#
    }

    @Test func aDescriptionTheStoredRecordsContradictIsRefusedAndChangesNothing() throws {
        let path = directory.path("store")
        let seeded = try rill(
            ["import", path], input: [Self.itemDescription, Self.item(1, name: #""apple""#)].joined(separator: "\n"))
        #expect(seeded.status == 0, "\(seeded.error)")
        let store = try Store(directory: path, options: StoreOptions(), create: false)
        let export = try rill(["export", path]).output
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb"))

        for (description, record) in [
            (#"{"entity":"Item","identifier":"Int","fields":{"name":"int"}}"#, Self.item(2, name: "3")),
            // Beside a new field, in an import that also writes a record of the declared kinds.
            (
                #"{"entity":"Item","identifier":"Int","fields":{"name":["string"],"price":"double"}}"#,
                Self.item(2, name: #"["x"]"#)
            ),
        ] {
            let run = try rill(["import", path], input: description + "\n" + record)
            #expect(run.status == 1, "\(description): \(run.output)")
            for name in ["line 1", "Item.name", "declared", "record 1", "string"] {
                #expect(run.error.contains(name), "\(name): \(run.error)")
            }
            #expect(try rill(["export", path]).output == export)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb")) == bytes)
        }
        #expect(try store.declaredShape(of: "Item")?.jsonValue.jsonString() == #"{"id":"int","name":"string"}"#)

        // The store still takes names as strings only, and its export imports again.
        #expect(try rill(["insert", path, "Item", #"{"id":2,"name":"pear"}"#]).status == 0)
        #expect(try rill(["insert", path, "Item", #"{"id":3,"name":77}"#]).status == 1)
        let copy = try rill(["import", directory.path("copy")], input: try rill(["export", path]).output)
        #expect(copy.status == 0, "\(copy.error)")
        #expect(try rill(["check", path]).status == 0)

        // A kind no record contradicts may change: a field no record holds, or one only gains.
        let wider = #"{"entity":"Item","identifier":"Int","fields":{"price":"double","tags":"[string]"}}"#
        #expect(try rill(["import", path], input: wider).status == 0)
        let cheaper = #"{"entity":"Item","identifier":"Int","fields":{"price":"decimal","name":"string"}}"#
        let changed = try rill(["import", path], input: cheaper)
        #expect(changed.status == 0, "\(changed.error)")
        #expect(
            try store.declaredShape(of: "Item")?.jsonValue.jsonString()
                == #"{"id":"int","name":"string","price":"decimal","tags":["string"]}"#)
    }

    @Test func aDescriptionCannotChangeAKindTheModelsSchemaReads() throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: TaskV1.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        container.mainContext.insert(TaskV1(id: "t1", title: "write", priority: "high", done: false))
        try container.mainContext.save()

        // What the model reads is taken again, as an export describes it.
        let exported = try rill(["export", path])
        #expect(try rill(["import", path], input: exported.output).status == 0)

        // No record holds a number of priority, but the schema reads a string.
        let run = try rill(
            ["import", path], input: #"{"entity":"Task","identifier":"String","fields":{"priority":"int"}}"#)
        #expect(run.status == 1)
        for name in ["Task.priority", "declared int", "schema version 1", "string", "migration"] {
            #expect(run.error.contains(name), "\(name): \(run.error)")
        }
        #expect(try rill(["check", path]).status == 0)
    }

    @Test func anArrayKindReadsAsRillSchemaPrintsItAndABadKindIsNamed() throws {
        let path = directory.path("store")
        let description = #"{"entity":"Note","identifier":"Int","fields":{"tags":"[string]","at":["date"]}}"#
        let note = #"{"op":"insert","entity":"Note","record":{"id":1,"tags":["a"],"at":["2026-01-02T03:04:05Z"]}}"#
        let imported = try rill(["import", path], input: description + "\n" + note)
        #expect(imported.status == 0, "\(imported.error)")
        let schema = try rill(["schema", path])
        #expect(schema.output.contains("[string]") && schema.output.contains("[date]"), "\(schema.output)")

        for (fields, names) in [
            (#"{"tags":"[strin]"}"#, ["field tags", "[strin]"]),
            (#"{"title":"flt"}"#, ["field title", "flt"]),
            (#"{"address":{"city":7}}"#, ["field address.city", "7"]),
            (#""string""#, ["must be an object"]),
        ] {
            let run = try rill(
                ["import", directory.path("bad")],
                input: #"{"entity":"Book","identifier":"Int","fields":\#(fields)}"#)
            #expect(run.status == 1)
            for name in ["line 1", "Book"] + names { #expect(run.error.contains(name), "\(name): \(run.error)") }
        }
    }

    /// A store whose records contradict the declared kinds, as an earlier Rill let an import make.
    @Test func checkHoldsTheRecordsToTheDeclaredKinds() throws {
        let path = directory.path("store")
        let mixed = [
            #"{"entity":"Item","identifier":"Int"}"#, Self.item(1, name: #""apple""#), Self.item(2, name: "77"),
            #"{"op":"insert","entity":"Item","record":{"id":3,"name":"pear","tags":["a",5]}}"#,
        ]
        #expect(try rill(["import", path], input: mixed.joined(separator: "\n")).status == 0)
        #expect(try rill(["check", path]).status == 0)

        let store = try Store(directory: path, options: StoreOptions(), create: false)
        let declared = try RecordShape.described(
            by: try JSONReader.parse(Array(#"{"name":"int","tags":"[string]"}"#.utf8)))
        try store.environment.write { txn in
            try Store.keepDeclaredShape(declared, of: "Item", in: txn, meta: store.meta)
        }
        let check = try rill(["check", path])
        #expect(check.status == 1, "\(check.output)")
        #expect(
            check.output.contains("problem: Item 1 holds string in `name`, which is declared int"), "\(check.output)")
        #expect(check.output.contains("problem: Item 3 holds string in `name`"), "\(check.output)")
        #expect(
            check.output.contains("problem: Item 3 holds int in `tags[]`, which is declared string"), "\(check.output)")
        #expect(!check.output.contains("Item 2"), "\(check.output)")
        let json = try rill(["check", "--json", path])
        #expect(json.status == 1 && json.output.contains(#""healthy":false"#), "\(json.output)")
    }
}
