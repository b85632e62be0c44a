import Foundation
import RillStorage
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// `rill rebuild` as a real process: a store damaged behind the log's back is whole again, and
/// `rill check` says so.
@Suite struct RebuildCommandTests {
    let directory = TemporaryDirectory()

    func rill(_ arguments: [String]) throws -> ProcessRun { try runBuilt("rill", arguments) }

    @Test func rebuildRepairsRecordsAndIndexesFromTheLogAndCheckPasses() throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Gadget.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        var random = SeededGenerator(label: "rebuild command")
        for id in 0..<40 {
            container.mainContext.insert(Gadget.random(id: id, using: &random))
            if id % 10 == 9 { try container.mainContext.save() }
        }
        container.mainContext.delete(try #require(try container.mainContext.model(Gadget.self, id: 3)))
        try container.mainContext.save()
        let store = container.store
        let entity = try #require(try store.entity(named: "Gadget"))
        let indexEntries = try store.withReadTransaction { txn in
            try entity.indexes.map { try txn.count(of: $0.database) }.reduce(0, +)
        }

        // Damage: a record changed, a deleted one back, all of one index gone.
        try store.withWriteTransaction { txn in
            try txn.put(Array("garbage".utf8), for: 7.storageKey, in: entity.database)
            let old = try #require(try store.entries(after: 0).first?.changes.first { $0.key == 3.storageKey }?.record)
            try txn.put(old, for: 3.storageKey, in: entity.database)
            try txn.removeAll(from: try #require(entity.indexes.first { $0.name == "stock" }).database)
        }
        #expect(try rill(["check", path]).status == 1)

        let rebuilt = try rill(["rebuild", path])
        #expect(rebuilt.status == 0, "\(rebuilt.output)\(rebuilt.error)")
        #expect(
            rebuilt.output == "rebuilt 1 entities, 39 records, \(indexEntries) index entries from 5 commits\n",
            "\(rebuilt.output)")
        #expect(rebuilt.error.isEmpty, "not a terminal: no progress bar, \(rebuilt.error)")
        let check = try rill(["check", path])
        #expect(check.status == 0, "\(check.output)")
        #expect(check.output.contains("ok"))
        #expect(try container.mainContext.model(Gadget.self, id: 3) == nil)

        let json = try rill(["rebuild", path, "--json"])
        #expect(json.status == 0)
        #expect(
            json.output == #"{"commits":5,"entities":1,"records":39,"indexEntries":\#(indexEntries)}"# + "\n",
            "\(json.output)")
    }

    @Test func helpListsRebuildAndItsUsage() throws {
        let help = try rill(["--help"])
        #expect(help.status == 0 && help.output.contains("rebuild"), "\(help.output)")
        let usage = try rill(["rebuild", "--help"])
        #expect(usage.status == 0, "\(usage.error)")
        #expect(usage.output.contains("--json") && usage.output.contains("one write transaction"), "\(usage.output)")
    }

    @Test func rebuildOfAMissingStoreFailsLikeTheOtherCommands() throws {
        let missing = directory.path("missing")
        let rebuilt = try rill(["rebuild", missing])
        let checked = try rill(["check", missing])
        #expect(rebuilt.status == checked.status && rebuilt.status != 0)
        #expect(rebuilt.error == checked.error, "\(rebuilt.error)")
        #expect(!FileManager.default.fileExists(atPath: missing))
    }
}
