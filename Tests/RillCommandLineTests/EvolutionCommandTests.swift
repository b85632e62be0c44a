import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// The commands on a store that version 2 of a model migrated from version 1, with a version-1
/// writer still saving beside it: `rill get` and `rill query` print every record as version 2
/// reads it (compared with the typed fetch), `rill log` shows the migration once and the records
/// as they were written, `rill check` and `rill rebuild` pass.
@Suite struct EvolutionCommandTests {
    let directory = TemporaryDirectory()

    func rill(_ arguments: [String]) throws -> ProcessRun { try runBuilt("rill", arguments) }

    func json(_ line: Substring) throws -> RecordValue { try JSONReader.parse(Array(line.utf8)) }

    @Test func theCommandsSeeAMigratedStoreAsVersionTwo() throws {
        var random = SeededGenerator(label: "evolution commands")
        let path = directory.path("store")
        let configuration = ModelConfiguration(url: URL(fileURLWithPath: path))
        let writer = try ModelContainer(for: TaskV1.self, configurations: configuration)
        func writeVersionOne(_ rounds: Int) throws {
            for _ in 0..<rounds {
                writer.mainContext.insert(
                    TaskV1(
                        id: "t\(Int.random(in: 0..<15, using: &random))",
                        title: "w\(Int.random(in: 0..<4, using: &random))",
                        priority: ["low", "mid", "high"].randomElement(using: &random)!,
                        done: Bool.random(using: &random)))
                try writer.mainContext.save()
            }
        }
        try writeVersionOne(30)
        let container = try ModelContainer(for: TaskV2.self, configurations: configuration)
        let context = container.mainContext

        let log = try rill(["log", path])
        #expect(log.status == 0, "\(log.error)")
        let migrations = log.output.split(separator: "\n").filter { $0.contains("\"author\":\"rill.migration\"") }
        #expect(migrations.count == 1, "\(log.output)")
        // The commits before it show what version 1 wrote.
        let first = try json(try #require(log.output.split(separator: "\n").first))
        let record = QueryEvaluator.read(["changes"], from: first)
        #expect("\(record)".contains("title") && !"\(record)".contains("\"rank\""))
        #expect(try rill(["check", path]).status == 0)

        // The version-1 writer saves a few more records, of the old shape.
        try writeVersionOne(6)
        let typed = try context.fetch(FetchDescriptor<TaskV2>(sortBy: [SortDescriptor(\.id)]))
        for task in typed {
            let got = try rill(["get", path, "Task", task.id])
            #expect(got.status == 0, "\(got.error)")
            let value = try json(Substring(got.output.trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(QueryEvaluator.read(["name"], from: value) == .string(task.name), "\(got.output)")
            #expect(QueryEvaluator.read(["rank"], from: value) == .int(Int64(task.rank)), "\(got.output)")
        }
        for (query, descriptor) in [
            (
                "Task where name == \"w2\" sort by id",
                FetchDescriptor<TaskV2>(predicate: #Predicate { $0.name == "w2" })
            ),
            ("Task where rank == 3 sort by id", FetchDescriptor<TaskV2>(predicate: #Predicate { $0.rank == 3 })),
        ] {
            var sorted = descriptor
            sorted.sortBy = [SortDescriptor(\.id)]
            let run = try rill(["query", "--json", path, query])
            #expect(run.status == 0, "\(run.error)")
            let ids = try run.output.split(separator: "\n").map { QueryEvaluator.read(["id"], from: try json($0)) }
            #expect(ids == (try context.fetch(sorted).map { .string($0.id) }), "\(query): \(run.output)")
        }

        let rebuilt = try rill(["rebuild", path])
        #expect(rebuilt.status == 0, "\(rebuilt.output)\(rebuilt.error)")
        #expect(try context.fetch(FetchDescriptor<TaskV2>(sortBy: [SortDescriptor(\.id)])) == typed)
        // The records the older writer saved after the migration hold the old kind: rill check names them.
        let check = try rill(["check", path])
        #expect(check.output.contains("priority"), "\(check.output)")
    }
}
