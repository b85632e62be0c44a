import Foundation
import RillStorage
import RillTestSupport
import Testing

@testable import Rill

/// `rill import` as a real process: one atomic save of its descriptions (entities, indexes, field kinds) and
/// records, whose failure names the line and leaves everything as it was — no new store, directory, entity,
/// index or declared field.
@Suite struct ImportCommandTests {
    let directory = TemporaryDirectory()

    func rill(_ arguments: [String], input: String? = nil) throws -> ProcessRun {
        try runBuilt("rill", arguments, input: input)
    }

    static let bookDescription =
        #"{"entity":"Book","identifier":"Int","indexes":["author"],"fields":{"id":"int","title":"string","author":"string","pages":"int"}}"#

    static func book(_ id: Int, pages: Int = 100) -> String {
        #"{"op":"insert","entity":"Book","record":{"id":\#(id),"title":"T\#(id)","author":"A\#(id % 7)","pages":\#(pages)}}"#
    }

    /// Inputs that fail on a known line, each with what the error must name. Blank lines count.
    static let badImports: [(input: [String], line: Int, names: [String])] = [
        // A field the description does not have.
        (
            [bookDescription, book(1), "", #"{"op":"insert","entity":"Book","record":{"id":2,"titel":"x"}}"#], 4,
            ["Book", "titel"]
        ),
        // A value of the wrong kind.
        (
            [bookDescription, book(1), book(2), #"{"op":"insert","entity":"Book","record":{"id":3,"pages":"many"}}"#],
            4,
            ["Book", "pages"]
        ),
        // An identifier of the wrong kind.
        ([bookDescription, "", "", #"{"op":"insert","entity":"Book","record":{"id":"x"}}"#], 4, ["Book", "id"]),
        // An update of a record that is not there: found only inside the save's transaction.
        (
            [bookDescription, book(1), #"{"op":"update","entity":"Book","record":{"id":99,"pages":2}}"#], 3,
            ["Book", "99"]
        ),
        // An entity nothing describes.
        ([bookDescription, book(1), #"{"op":"insert","entity":"Note","record":{"id":1}}"#], 3, ["Note"]),
        // A description that is not one.
        ([bookDescription, #"{"entity":"Note","identifier":"Float"}"#], 2, ["identifier"]),
        // A line that is not JSON.
        ([bookDescription, book(1), #"{"op":"insert","#], 3, ["invalid JSON"]),
    ]

    func entries(of path: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    }

    @Test func aFailedImportIntoANewDirectoryNamesTheLineAndLeavesNoDirectory() throws {
        for (index, bad) in Self.badImports.enumerated() {
            let file = directory.path("bad\(index).ndjson")
            try (bad.input.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
            let before = try entries(of: directory.url.path)
            for (arguments, input) in [
                (["import", directory.path("new\(index)")], bad.input.joined(separator: "\n")),
                (["import", directory.path("deep\(index)/er/store"), "--file", file], nil),
            ] {
                let run = try rill(arguments, input: input)
                #expect(run.status == 1, "\(arguments): \(run.error)")
                let line = input == nil ? "line \(bad.line) of \(file)" : "line \(bad.line)"
                #expect(run.error.contains(line), "\(arguments): \(run.error)")
                for name in bad.names { #expect(run.error.contains(name), "\(arguments): \(run.error)") }
                #expect(!run.error.contains("rill-new"), "the staging directory is not named: \(run.error)")
                #expect(try entries(of: directory.url.path) == before, "nothing is left behind: \(arguments)")
            }

            // An existing empty directory stays empty.
            let empty = directory.path("empty\(index)")
            try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
            let run = try rill(["import", empty, "--file", file])
            #expect(run.status == 1 && run.error.contains("line \(bad.line) of \(file)"), "\(run.error)")
            #expect(try entries(of: empty).isEmpty)
        }
    }

    @Test func aFailedImportIntoAStoreLeavesItAsItWas() throws {
        let path = directory.path("store")
        let seed = [Self.bookDescription] + (1...20).map { Self.book($0) }
        #expect(try rill(["import", path], input: seed.joined(separator: "\n")).status == 0)
        let noteDescription =
            #"{"entity":"Note","identifier":"String","indexes":["text"],"fields":{"id":"string","text":"string"}}"#
        let widerBook =
            #"{"entity":"Book","identifier":"Int","indexes":["author","pages","title,pages"],"fields":{"id":"int","title":"string","author":"string","pages":"int","isbn":"string"}}"#
        let note = #"{"op":"insert","entity":"Note","record":{"id":"n1","text":"hello"}}"#
        let failing: [(input: [String], line: Int, names: [String])] =
            [
                // New entity, new indexes (built over the 20 stored books), a new declared field, then a bad record.
                (
                    [
                        noteDescription, widerBook, note, Self.book(30),
                        #"{"op":"insert","entity":"Book","record":{"id":31,"colour":"red"}}"#,
                    ],
                    5, ["Book", "colour"]
                ),
                // The same, failing inside the transaction, after the indexes were built.
                (
                    [
                        noteDescription, widerBook, note, Self.book(30, pages: 7), "",
                        #"{"op":"update","entity":"Note","record":{"id":"n2","text":"x"}}"#,
                    ], 6, ["Note", "n2"]
                ),
                // A description at odds with the store.
                ([noteDescription, #"{"entity":"Book","identifier":"String"}"#, note], 2, ["Book", "Int", "String"]),
            ] + Self.badImports.map { (input: $0.input, line: $0.line, names: $0.names) }

        let store = try Store(directory: path, options: StoreOptions(), create: false)
        func snapshot() throws -> [String] {
            [
                try rill(["export", path]).output, try rill(["stats", path]).output, String(try store.head()),
                try store.environment.databaseNames().joined(separator: ","),
                try store.declaredShape(of: "Book").map { $0.jsonValue.jsonString() } ?? "none",
                try store.declaredShape(of: "Note").map { $0.jsonValue.jsonString() } ?? "none",
            ]
        }
        let before = try snapshot()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb"))
        #expect(before[3] == "index:Book:author,log,meta,records:Book")

        for bad in failing {
            let run = try rill(["import", path, "--author", "x"], input: bad.input.joined(separator: "\n"))
            #expect(run.status == 1, "\(bad.input): \(run.error)")
            #expect(run.error.contains("line \(bad.line):"), "\(run.error)")
            for name in bad.names { #expect(run.error.contains(name), "\(run.error)") }
            #expect(try snapshot() == before, "\(bad.input)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb")) == bytes, "\(bad.input)")
        }
        #expect(try entries(of: path) == ["data.mdb", "lock.mdb"])

        // The same import without its bad line saves everything, and its indexes answer.
        let good = try rill(
            ["import", path],
            input: [noteDescription, widerBook, note, Self.book(30, pages: 7)].joined(separator: "\n"))
        #expect(good.status == 0, "\(good.error)")
        #expect(good.output == #"{"seq":2}"# + "\n")
        let book = try #require(try store.entity(named: "Book"))
        #expect(book.indexes.map(\.name).sorted() == ["author", "pages", "title,pages"])
        #expect(try store.recordCount(of: #require(try store.entity(named: "Note"))) == 1)
        let query = try rill(["query", path, "Book where pages == 7"])
        #expect(query.status == 0 && query.output.contains("T30"), "\(query.output)\(query.error)")
        #expect(try rill(["check", path]).status == 0)
    }

    @Test func aSaveOfAProcessThatCachedTheEntityMaintainsAnIndexAnImportAdded() throws {
        let path = directory.path("store")
        #expect(
            try rill(["import", path], input: [Self.bookDescription, Self.book(1)].joined(separator: "\n")).status == 0)
        let store = try Store(directory: path, options: StoreOptions(), create: false)
        let cached = try #require(try store.entity(named: "Book"))
        #expect(cached.indexes.map(\.name) == ["author"])

        let wider = #"{"entity":"Book","identifier":"Int","indexes":["pages"]}"#
        #expect(
            try rill(["import", path], input: [wider, Self.book(2, pages: 5)].joined(separator: "\n")).status == 0)
        // This process's description of Book predates the index: its save must notice and maintain it.
        let record = RecordValue.map([
            RecordField(name: "id", value: .int(3)), RecordField(name: "title", value: .string("T3")),
            RecordField(name: "author", value: .string("A3")), RecordField(name: "pages", value: .int(5)),
        ])
        _ = try store.commit(
            [PreparedChange(entity: cached, key: 3.storageKey, operation: .upsert(record.recordBytes()))], author: nil)
        let pages = try #require(try store.entity(named: "Book")?.indexes.first { $0.name == "pages" })
        #expect(try store.read { try $0.entryCount(of: pages) } == 3)
        #expect(try rill(["check", path]).status == 0)
    }

    /// Records written through JSON into fields nothing declares may hold values of several kinds
    /// (one save's records are checked against the stored ones, not against each other): the
    /// export describes such a field as `any`, whatever record comes first, and its import gives
    /// the same records and the same export.
    @Test func fieldsHoldingSeveralKindsExportAndImportAsTheyAre() throws {
        for order in [[1, 2, 3], [2, 1, 3], [3, 2, 1]] {
            let source = directory.path("mixed-\(order)")
            let copy = directory.path("copy-\(order)")
            #expect(try rill(["import", source], input: #"{"entity":"Person","identifier":"Int"}"#).status == 0)
            let records = [
                1: #"{"id":1,"age":30,"tags":[1,"a"],"spec":{"w":1}}"#,
                2: #"{"id":2,"age":25.5,"tags":["b",2],"spec":{"w":"heavy"}}"#,
                3: #"{"id":3,"age":"old","tags":[true],"spec":[1]}"#,
            ]
            let inserted = try rill(["insert", source, "Person"] + order.map { records[$0]! })
            #expect(inserted.status == 0, "\(inserted.error)")
            let exported = try rill(["export", source])
            #expect(exported.status == 0, "\(exported.error)")
            #expect(exported.output.contains(#""age":"any""#), "\(exported.output)")
            let imported = try rill(["import", copy], input: exported.output)
            #expect(imported.status == 0, "\(order): \(imported.error)")
            #expect(try rill(["export", copy]).output == exported.output, "\(order)")
            // Later writes take either kind.
            for record in [#"{"id":4,"age":7}"#, #"{"id":5,"age":7.5}"#, #"{"id":6,"age":"young"}"#] {
                let later = try rill(["insert", copy, "Person", record])
                #expect(later.status == 0, "\(record): \(later.error)")
            }
        }
    }

    @Test func aDescriptionNeedNotListTheIdentifier() throws {
        for (kind, id, described) in [
            ("String", #""a""#, "string"), ("Int", "7", "int"),
            ("UUID", #""3F2504E0-4F89-11D3-9A0C-0305E82C3301""#, "uuid"),
        ] {
            let path = directory.path("store-\(kind)")
            let description = #"{"entity":"Note","identifier":"\#(kind)","fields":{"title":"string"}}"#
            // In the import itself, and in a later insert.
            let record = #"{"op":"insert","entity":"Note","record":{"id":\#(id),"title":"x"}}"#
            let imported = try rill(["import", path], input: description + "\n" + record + "\n")
            #expect(imported.status == 0, "\(kind): \(imported.error)")
            let later = #"{"op":"update","entity":"Note","record":{"id":\#(id),"title":"y"}}"#
            let inserted = try rill(["update", path, "Note"], input: later + "\n")
            #expect(inserted.status == 0, "\(kind): \(inserted.error)")
            let exported = try rill(["export", path])
            #expect(exported.output.contains(#""id":"\#(described)""#), "\(kind): \(exported.output)")
            #expect(exported.output.contains(#""title":"y""#), "\(kind): \(exported.output)")
        }
    }

    @Test func aLargeImportIsOneSave() throws {
        let count = 20_000
        var lines = [Self.bookDescription, #"{"entity":"Note","identifier":"String"}"#]
        lines.reserveCapacity(count + 3)
        for id in 0..<count { lines.append(Self.book(id, pages: id % 500)) }
        lines.append(#"{"op":"insert","entity":"Note","record":{"id":"n","text":"done"}}"#)
        let file = directory.path("large.ndjson")
        try lines.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)

        // Into an existing empty directory: the store appears in it, and nothing else does.
        let path = directory.path("large")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        let run = try rill(["import", path, "--file", file])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output == #"{"seq":1}"# + "\n")
        #expect(try entries(of: path).filter { !$0.hasSuffix(".mdb") }.isEmpty)
        let store = try Store(directory: path, options: StoreOptions(), create: false)
        #expect(try store.entries(after: 0).map(\.changes.count) == [count + 1])
        #expect(try store.recordCount(of: #require(try store.entity(named: "Book"))) == count)
        let author = try #require(try store.entity(named: "Book")?.indexes.first)
        #expect(try store.read { try $0.entryCount(of: author) } == count)
        #expect(try rill(["check", path]).status == 0)
    }
}
