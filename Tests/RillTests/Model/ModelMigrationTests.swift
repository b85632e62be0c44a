import Dispatch
import Foundation
import RillLocks
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// A kind change between two versions of a model (`TaskV1.priority` a word, `TaskV2.priority` an
/// integer, with a field renamed, one added and one removed besides): the migration the model
/// declares runs once, as one commit of the log, when version 2 first opens the store; every
/// reader then sees version 2 (fetches, text queries, as-of queries of the commits before it, live
/// queries, a rebuild), an older writer left running breaks nothing, and without a migration the
/// container refuses the store with an error naming the entity, the field, both versions and kinds.
@Suite struct ModelMigrationTests {
    let directory = TemporaryDirectory()

    final class Events: @unchecked Sendable {
        // Appended on the follower's thread, taken on the test's.
        private let events = Lock<[RecordLiveQuery.Event]>([])
        func append(_ event: RecordLiveQuery.Event) { events.withLock { $0.append(event) } }
        func take() -> [RecordLiveQuery.Event] {
            events.withLock { events in
                defer { events = [] }
                return events
            }
        }
    }

    final class Received: @unchecked Sendable {
        // Written on the observer's queue, read after draining it.
        var changes: [ResultsChange<TaskV2>] = []
    }

    /// Random saves of version 1; the tasks after each commit, by sequence.
    static func writeVersionOne(
        _ container: ModelContainer, rounds: Int, random: inout SeededGenerator, tasks: inout [String: TaskV1],
        states: inout [UInt64: [String: TaskV1]]
    ) throws {
        let context = container.mainContext
        for _ in 0..<rounds {
            let id = "t\(Int.random(in: 0..<25, using: &random))"
            if let old = tasks[id], Int.random(in: 0..<4, using: &random) == 0 {
                context.delete(old)
                tasks[id] = nil
            } else {
                let task = TaskV1(
                    id: id, title: "w\(Int.random(in: 0..<6, using: &random))",
                    priority: ["low", "mid", "high"].randomElement(using: &random)!,
                    done: Bool.random(using: &random))
                context.insert(task)
                tasks[id] = task
            }
            if let sequence = try context.save() { states[sequence] = tasks }
        }
    }

    static func migrated(_ tasks: [String: TaskV1]) -> [TaskV2] {
        tasks.values.map(TaskV2.migrated).sorted { $0.id < $1.id }
    }

    static let byID = [SortDescriptor(\TaskV2.id)]

    @Test func aKindChangeIsMigratedOnceInACommitAndEveryReaderSeesVersionTwo() throws {
        var random = SeededGenerator(label: "model migration")
        let url = directory.url.appendingPathComponent("store")
        let configuration = ModelConfiguration(url: url)
        var tasks: [String: TaskV1] = [:]
        var states: [UInt64: [String: TaskV1]] = [0: [:]]
        // Version 1 writes, and stays open: an older writer running beside version 2.
        let writer = try ModelContainer(for: TaskV1.self, configurations: configuration)
        try Self.writeVersionOne(writer, rounds: 60, random: &random, tasks: &tasks, states: &states)
        let before = try writer.lastSequence()
        let text = try QueryParser.parse("Task where done == false sort by id")
        let events = Events()
        let textLive = try RecordLiveQuery(text, store: writer.store) { events.append($0) }
        guard case .initial(var rows, _)? = events.take().first else {
            Issue.record("no initial results")
            return
        }

        let container = try ModelContainer(for: TaskV2.self, configurations: configuration)
        let store = container.store
        let context = container.mainContext
        // One commit, by the migration, rewriting every record; recorded in the catalog.
        let entries = try store.entries(after: before)
        #expect(entries.count == 1)
        #expect(entries.first?.author == Store.migrationAuthor)
        #expect(entries.first?.changes.count == tasks.count)
        #expect(entries.first?.changes.allSatisfy { $0.kind == .update } == true)
        #expect(try store.hasMigrated("Task", from: 1))
        #expect(try store.schema(of: "Task")?.version == 2)
        #expect(try context.fetch(FetchDescriptor<TaskV2>(sortBy: Self.byID)) == Self.migrated(tasks))
        let report = try store.check()
        #expect(report.isHealthy, "\(report.problems)")

        // Typed fetches (also on the changed field, through its index or not) and text queries agree.
        let pairs: [(String, FetchDescriptor<TaskV2>)] = [
            (
                "Task where priority == 3 sort by id",
                FetchDescriptor(predicate: #Predicate { $0.priority == 3 }, sortBy: Self.byID)
            ),
            (
                "Task where priority >= 2 and done == true sort by id",
                FetchDescriptor(predicate: #Predicate { $0.priority >= 2 && $0.done }, sortBy: Self.byID)
            ),
            (
                "Task where name == \"w1\" sort by id",
                FetchDescriptor(predicate: #Predicate { $0.name == "w1" }, sortBy: Self.byID)
            ),
            (
                "Task where rank == 3 sort by id",
                FetchDescriptor(predicate: #Predicate { $0.rank == 3 }, sortBy: Self.byID)
            ),
        ]
        func compareTextQueries(_ label: String) throws {
            for (query, typed) in pairs {
                let expected = try context.fetch(typed).map(\.id)
                let found = try store.run(try QueryParser.parse(query)).map {
                    QueryEvaluator.read(["id"], from: $0.record)
                }
                #expect(found == expected.map { .string($0) }, "\(label): \(query)")
            }
        }
        try compareTextQueries("after the migration")

        // The commits before the migration read as version 2 too (through the migration).
        for (sequence, state) in states {
            #expect(
                try context.fetch(FetchDescriptor<TaskV2>(sortBy: Self.byID), asOf: HistoryToken(sequence: sequence))
                    == Self.migrated(state), "as of \(sequence)")
        }

        // History shows the migration: each record before it (read through the migration, as
        // version 2 reads it) and after it, as version 1 wrote it and as version 2 does.
        let history = try context.fetchHistory(HistoryDescriptor(after: HistoryToken(sequence: before)))
        #expect(history.map(\.author) == [Store.migrationAuthor])
        for change in history.first?.changes ?? [] {
            let id = try #require(change.identifier(as: String.self))
            let expected = try #require(tasks[id].map(TaskV2.migrated))
            #expect(try change.before(as: TaskV2.self) == expected)
            #expect(try change.after(as: TaskV2.self) == expected)
            #expect(try change.before(as: TaskV1.self) == tasks[id])
        }

        // A replay across the migration goes through the same results as text queries as of
        // each commit.
        let replay = try RecordReplay(text, store: store, from: before - 5, to: before + 1)
        var replayed = replay.initial
        for change in replay.changes { change.apply(to: &replayed) }
        #expect(replayed.map(\.record) == (try store.run(text).map(\.record)))
        #expect(
            replay.initial.map(\.record) == (try store.run(text, asOf: .sequence(before - 5)).rows.map(\.record)))

        // The text live query begun before streams the migration's commit.
        try textLive.catchUp()
        for event in events.take() {
            if case .change(let change) = event { change.apply(to: &rows) }
            if case .failed(let error) = event { Issue.record("\(error)") }
        }
        #expect(rows.map(\.record) == (try store.run(text).map(\.record)))

        // Opening again, here or in another container, runs nothing.
        _ = try ModelContainer(for: TaskV2.self, configurations: configuration)
        #expect(try store.head() == before + 1)

        // A rebuild from the log gives the same records.
        let fetched = try context.fetch(FetchDescriptor<TaskV2>(sortBy: Self.byID))
        _ = try store.rebuild()
        #expect(try context.fetch(FetchDescriptor<TaskV2>(sortBy: Self.byID)) == fetched)
        #expect(try store.check().isHealthy)

        // The older writer goes on: version 2's live query reads its records through the
        // migration, and never stops.
        let descriptor = FetchDescriptor<TaskV2>(predicate: #Predicate { $0.priority >= 2 }, sortBy: Self.byID)
        let live = try LiveQuery(descriptor, in: container)
        let received = Received()
        let queue = DispatchQueue(label: "migration")
        let observation = live.observe(on: queue) { received.changes.append($0) }
        var results = Array(live)
        try Self.writeVersionOne(writer, rounds: 20, random: &random, tasks: &tasks, states: &states)
        try live.catchUp()
        queue.sync {}
        for change in received.changes { results = change.apply(to: results) }
        #expect(live.error == nil, "\(String(describing: live.error))")
        let expected = Self.migrated(tasks).filter { $0.priority >= 2 }
        #expect(results == expected)
        #expect(try context.fetch(descriptor) == expected)
        #expect(try context.fetch(FetchDescriptor<TaskV2>(sortBy: Self.byID)) == Self.migrated(tasks))
        observation.cancel()

        // Version 1 opening the migrated store is refused: it would write what version 2 migrated.
        let refused = #expect(throws: RillError.self) {
            _ = try ModelContainer(for: TaskV1.self, configurations: configuration)
        }
        #expect(refused?.code == .migrationRequired, "\(String(describing: refused))")
        #expect(
            (refused?.underlyingError as? SchemaKindChange)
                == SchemaKindChange(
                    entity: "Task", field: "priority", storedVersion: 2, storedKind: "int", modelVersion: 1,
                    modelKind: "string"))
        #expect(try store.entries(after: before).filter { $0.author == Store.migrationAuthor }.count == 1)
    }

    @Test func withoutAMigrationTheErrorNamesTheEntityTheFieldBothVersionsAndBothKinds() throws {
        var random = SeededGenerator(label: "no migration")
        let configuration = ModelConfiguration(url: directory.url.appendingPathComponent("store"))
        var tasks: [String: TaskV1] = [:]
        var states: [UInt64: [String: TaskV1]] = [:]
        let writer = try ModelContainer(for: TaskV1.self, configurations: configuration)
        try Self.writeVersionOne(writer, rounds: 10, random: &random, tasks: &tasks, states: &states)
        let head = try writer.lastSequence()
        let error = #expect(throws: RillError.self) {
            _ = try ModelContainer(for: TaskV2Unmigrated.self, configurations: configuration)
        }
        #expect(error?.code == .migrationRequired)
        let change = SchemaKindChange(
            entity: "Task", field: "priority", storedVersion: 1, storedKind: "string", modelVersion: 2,
            modelKind: "int")
        #expect(error?.underlyingError as? SchemaKindChange == change)
        #expect(
            error?.message.contains("Task.priority is string in schema version 1 and int in version 2") == true,
            "\(String(describing: error))")
        // Nothing was written: the schema is still version 1's, the log as it was.
        #expect(try writer.store.schema(of: "Task")?.version == 1)
        #expect(try writer.lastSequence() == head)

        // With the migration declared but the store opened read-only, it cannot run: the same error.
        var readOnly = configuration
        readOnly.allowsSave = false
        let cannotRun = #expect(throws: RillError.self) {
            _ = try ModelContainer(for: TaskV2.self, configurations: readOnly)
        }
        #expect(cannotRun?.code == .migrationRequired && cannotRun?.message.contains("read-only") == true)
        #expect(try writer.store.hasMigrated("Task", from: 1) == false)
    }

    @Test func twoProcessesOpeningAtOnceMigrateOnce() throws {
        let helper = buildProductsDirectory.appendingPathComponent("rill-test-helper")
        var random = SeededGenerator(label: "migration race")
        for round in 0..<6 {
            let path = directory.path("race-\(round)")
            var tasks: [String: TaskV1] = [:]
            var states: [UInt64: [String: TaskV1]] = [:]
            let before: UInt64
            do {
                let writer = try ModelContainer(
                    for: TaskV1.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
                try Self.writeVersionOne(writer, rounds: 30, random: &random, tasks: &tasks, states: &states)
                before = try writer.lastSequence()
            }
            var processes: [(Process, Pipe)] = []
            for _ in 0..<2 {
                let process = Process()
                process.executableURL = helper
                process.arguments = ["migrate", path]
                let output = Pipe()
                process.standardOutput = output
                try process.run()
                processes.append((process, output))
            }
            _ = FileManager.default.createFile(atPath: path + ".go", contents: Data())
            for (process, output) in processes {
                process.waitUntilExit()
                #expect(process.terminationStatus == 0)
                let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                #expect(printed == "\(tasks.count)\n", "round \(round)")
            }
            let store = try Store(directory: path, options: StoreOptions(readOnly: true), create: false)
            let entries = try store.entries(after: before)
            #expect(entries.count == 1, "round \(round): one migration commit, \(entries.count) found")
            #expect(entries.first?.author == Store.migrationAuthor)
        }
    }
}
