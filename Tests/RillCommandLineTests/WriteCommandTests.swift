import Foundation
import RillStorage
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// `rill insert` / `update` / `delete`, `import` / `export`, `check` and `log --follow`, as
/// real processes.
@Suite struct WriteCommandTests {
    let directory = TemporaryDirectory()

    func rill(_ arguments: [String], input: String? = nil) throws -> ProcessRun {
        try runBuilt("rill", arguments, input: input)
    }

    func gadgetStore(_ name: String, count: Int) throws -> (String, ModelContainer) {
        let path = directory.path(name)
        let container = try ModelContainer(
            for: Gadget.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        var random = SeededGenerator(label: "write commands")
        for id in 0..<count {
            var gadget = Gadget.random(id: id, using: &random)
            // Every field appears in some stored record: what JSON input is checked against.
            if id == 0 {
                gadget.maker = "Acme"
                gadget.rating = 4.5
            }
            container.mainContext.insert(gadget)
        }
        try container.mainContext.save()
        return (path, container)
    }

    @Test func insertUpdateDeleteAreAtomicSavesCheckedAgainstTheRecords() throws {
        let (path, container) = try gadgetStore("store", count: 5)
        let context = ModelContext(container)
        let inserted = try rill([
            "insert", path, "Gadget", "--author", "cli",
            #"{"id":100,"name":"Lamp","maker":"Acme","price":12,"stock":3,"tags":["new"],"released":"2025-01-02T03:04:05Z","active":true,"spec":{"weight":900,"color":"red"}}"#,
        ])
        #expect(inserted.status == 0, "\(inserted.error)")
        let lamp = try #require(try context.model(Gadget.self, id: 100))
        #expect(lamp.price == 12.0 && lamp.released == Date(timeIntervalSince1970: 1_735_787_045) && lamp.rating == nil)
        #expect(try container.store.entries(after: 1).last?.author == "cli")

        let updated = try rill(["update", path, "Gadget", #"{"id":100,"stock":4,"maker":null}"#])
        #expect(updated.status == 0, "\(updated.error)")
        let changed = try #require(try context.model(Gadget.self, id: 100))
        #expect(changed.stock == 4 && changed.maker == nil && changed.name == "Lamp")

        // NDJSON on standard input; a bad line leaves the store unchanged.
        let head = try container.store.head()
        let bad = try rill(
            ["insert", path, "Gadget"],
            input:
                #"{"id":101,"name":"A","price":1,"stock":1,"tags":[],"released":"2025-01-01T00:00:00Z","active":true,"spec":{"weight":1,"color":"x"}}"#
                + "\n" + #"{"id":102,"name":"B","price":"cheap"}"# + "\n")
        #expect(bad.status == 1)
        #expect(bad.error.contains("change 2") && bad.error.contains("price"), "\(bad.error)")
        #expect(try container.store.head() == head)
        #expect(try context.model(Gadget.self, id: 101) == nil)

        let deleted = try rill(["delete", path, "Gadget", "100", "4"])
        #expect(deleted.status == 0, "\(deleted.error)")
        #expect(try context.model(Gadget.self, id: 100) == nil && context.model(Gadget.self, id: 4) == nil)
        #expect(try container.store.entries(after: head).count == 1, "one save for the whole invocation")

        for (arguments, status, message) in [
            (["insert", path, "Widget", #"{"id":1}"#], Int32(1), "no entity Widget (it has: Gadget)"),
            (["insert", path, "Gadget", #"{"id":"x"}"#], 1, "an id of Gadget must be an integer"),
            (["insert", path, "Gadget", #"{"id":1,"colour":"red"}"#], 1, "no field \"colour\""),
            (["insert", path, "Gadget", #"{"id":1,"#], 1, "invalid JSON"),
            (["update", path, "Gadget", #"{"id":999,"stock":1}"#], 1, "no Gadget 999 to update"),
            (["insert", path], 64, "missing <entity>"),
        ] {
            let run = try rill(arguments)
            #expect(run.status == status, "\(arguments): \(run.error)")
            #expect(run.error.contains(message), "\(arguments): \(run.error)")
        }
    }

    @Test func aWriteToAMissingStoreSaysWhatMakesOne() throws {
        let missing = directory.path("missing")
        let insert = try rill(["insert", missing, "Gadget", #"{"id":1}"#])
        #expect(insert.status == 1)
        #expect(insert.error.contains("no store at \(missing)"), "\(insert.error)")
        #expect(insert.error.contains("`rill import`"), "\(insert.error)")
        #expect(!FileManager.default.fileExists(atPath: missing), "the tool made no store")
        // `rill import` makes one, so its error names no other way.
        let imported = try rill(["import", missing], input: "{\"op\":\"bad\"}\n")
        #expect(imported.status == 1)
        #expect(!imported.error.contains("a store is made"), "\(imported.error)")
    }

    @Test func exportThenImportRebuildsTheStore() throws {
        let (path, container) = try gadgetStore("source", count: 300)
        let exported = try rill(["export", path])
        #expect(exported.status == 0, "\(exported.error)")
        #expect(exported.output.split(separator: "\n").count == 301)
        let file = directory.path("gadgets.ndjson")
        try exported.output.write(toFile: file, atomically: true, encoding: .utf8)
        let target = directory.path("target")
        let imported = try rill(["import", target, "--file", file])
        #expect(imported.status == 0, "\(imported.error)")

        let copy = try ModelContainer(
            for: Gadget.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: target)))
        let all = FetchDescriptor<Gadget>(sortBy: [SortDescriptor(\.id)])
        #expect(try copy.mainContext.fetch(all) == container.mainContext.fetch(all), "every field round-trips")
        #expect(
            try copy.store.entity(named: "Gadget")?.indexes.map(\.name)
                == container.store.entity(named: "Gadget")?.indexes.map(\.name))
        #expect(try copy.store.entries(after: 0).count == 1, "one atomic save")
        #expect(try rill(["check", target]).status == 0)
    }

    @Test func checkReportsWhatDiffersFromTheLog() throws {
        let (path, container) = try gadgetStore("store", count: 50)
        container.mainContext.delete(try #require(try container.mainContext.model(Gadget.self, id: 3)))
        try container.mainContext.save()
        let healthy = try rill(["check", path])
        #expect(healthy.status == 0, "\(healthy.output)\(healthy.error)")
        #expect(healthy.output.contains("ok"))

        // Damage behind the log's back: a record changed, a deleted one back, an index key gone.
        let store = container.store
        let entity = try #require(try store.entity(named: "Gadget"))
        let index = try #require(entity.indexes.first { $0.name == "stock" })
        try store.withWriteTransaction { txn in
            try txn.put(Array("garbage".utf8), for: 7.storageKey, in: entity.database)
            let old = try #require(try store.entries(after: 0).first?.changes.first { $0.key == 3.storageKey }?.record)
            try txn.put(old, for: 3.storageKey, in: entity.database)
            try txn.withCursor(index.database) { cursor in
                if let first = try cursor.first() { _ = try txn.delete(Array(first.key), in: index.database) }
            }
        }
        let damaged = try rill(["check", path])
        #expect(damaged.status == 1)
        #expect(damaged.output.contains("Gadget 7 differs"), "\(damaged.output)")
        #expect(damaged.output.contains("Gadget 3 is stored but the log deleted it"), "\(damaged.output)")
        #expect(damaged.output.contains("index Gadget(stock) lacks 1 key"), "\(damaged.output)")
        let json = try rill(["check", path, "--json"])
        #expect(json.status == 1 && json.output.contains(#""healthy":false"#))
    }

    @Test func logFollowPrintsCommitsAsTheyLand() throws {
        let (path, container) = try gadgetStore("store", count: 2)
        let follower = try RillProcess(["log", path, "--follow", "--since", "1"])
        usleep(300_000)
        var random = SeededGenerator(label: "log follow")
        for id in 10..<13 {
            container.mainContext.insert(Gadget.random(id: id, using: &random))
            try container.mainContext.save()
        }
        #expect(follower.wait { $0.count == 3 }, "\(follower.output)")
        #expect(follower.output.map(ResultsLines.sequence) == [2, 3, 4])
        #expect(follower.stop(SIGINT) == 0)
    }
}
