import Foundation
import RillLocks
import RillStorage
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// `Store.rebuild`: the records and indexes a replay of the log gives are the ones the saves
/// wrote, byte for byte, and `check` passes on them; a damaged log is an error that writes nothing.
@Suite struct RebuildTests {
    let directory = TemporaryDirectory()

    struct Memo: PersistentModel, Equatable {
        static let entityName = "Memo"
        var id: String
        var title: String
        var year: Int

        static let indexes: [ModelIndex<Memo>] = [ModelIndex(\.title), ModelIndex(\.title, \.year), ModelIndex(\.year)]
    }

    struct Tally: PersistentModel, Equatable {
        static let entityName = "Tally"
        var id: Int
        var group: String
        var count: Int

        static let indexes: [ModelIndex<Tally>] = [ModelIndex(\.group, \.count), ModelIndex(\.count)]
    }

    /// Every entry of every projection and index, by database name.
    static func contents(of store: Store) throws -> [String: [[UInt8]: [UInt8]]] {
        let names = try store.environment.databaseNames().filter { $0.hasPrefix("records:") || $0.hasPrefix("index:") }
        var contents: [String: [[UInt8]: [UInt8]]] = [:]
        for name in names {
            let database = try #require(try store.environment.database(named: name, create: false))
            try store.withReadTransaction { txn in
                var entries: [[UInt8]: [UInt8]] = [:]
                try txn.forEachEntry(in: database) { key, value in
                    entries[Array(key)] = Array(value)
                    return true
                }
                contents[name] = entries
            }
        }
        return contents
    }

    /// Empties every projection and index, as a damage would: the catalog and the log stay.
    static func clearProjections(of store: Store) throws {
        let names = try store.environment.databaseNames().filter { $0.hasPrefix("records:") || $0.hasPrefix("index:") }
        try store.withWriteTransaction { txn in
            for name in names { try txn.removeAll(from: try #require(try txn.database(named: name, create: false))) }
        }
    }

    /// A random run of saves over two entities: inserts, updates (some of indexed fields, some
    /// to long titles past the index keys' cut) and deletes, several changes a save.
    static func randomRun(in path: String, saves: Int, generator: inout SeededGenerator) throws {
        let container = try ModelContainer(
            for: Memo.self, Tally.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = ModelContext(container)
        func title() -> String {
            let base = ["alpha", "beta", "gamma"].randomElement(using: &generator)!
            return Bool.random(using: &generator)
                ? base + String(repeating: "x", count: Int.random(in: 200...700, using: &generator))
                    + "\(Int.random(in: 0..<3, using: &generator))"
                : base
        }
        func memoID() -> String {
            let n = Int.random(in: 0..<40, using: &generator)
            return n < 5 ? String(repeating: "i", count: 300) + "\(n)" : "memo-\(n)"
        }
        for _ in 0..<saves {
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<4:
                    context.insert(
                        Memo(id: memoID(), title: title(), year: Int.random(in: 1990...1995, using: &generator)))
                case 4..<6:
                    context.delete(Memo(id: memoID(), title: "", year: 0))
                case 6..<9:
                    context.insert(
                        Tally(
                            id: Int.random(in: -20..<20, using: &generator), group: title(),
                            count: Int.random(in: 0..<5, using: &generator)))
                default:
                    context.delete(Tally(id: Int.random(in: -20..<20, using: &generator), group: "", count: 0))
                }
            }
            try context.save()
        }
    }

    @Test func rebuildAfterClearingProjectionsAndIndexesGivesTheOriginalsByteForByte() throws {
        var generator = SeededGenerator(label: "rebuild")
        let path = directory.path("store")
        try Self.randomRun(in: path, saves: 300, generator: &generator)
        let store = try Store(directory: path, options: StoreOptions(), create: false)
        let original = try Self.contents(of: store)
        // (A save whose changes all come to nothing, such as deleting a missing record, commits nothing.)
        let commits = try store.read { try store.log.head(in: $0) }
        #expect(commits > 200)
        #expect(original.keys.count == 7)
        #expect(original["records:Memo"]?.isEmpty == false)
        #expect(try store.check().isHealthy)

        try Self.clearProjections(of: store)
        #expect(try !store.check().isHealthy)
        let reports = Lock<[StoreProgress]>([])
        let report = try store.rebuild { progress in reports.withLock { $0.append(progress) } }

        let rebuilt = try Self.contents(of: store)
        #expect(rebuilt.keys.sorted() == original.keys.sorted())
        for (name, entries) in original {
            #expect(rebuilt[name] == entries, "\(name) differs after the rebuild")
        }
        let check = try store.check()
        #expect(check.isHealthy, "\(check.problems)")
        #expect(report.commits == commits)
        #expect(report.entities == 2)
        #expect(report.records == original["records:Memo"]!.count + original["records:Tally"]!.count)
        #expect(report.indexEntries == original.filter { $0.key.hasPrefix("index:") }.values.map(\.count).reduce(0, +))
        let phases = reports.withLock { $0 }
        #expect(phases.first == StoreProgress(phase: .replayingLog, completed: 0, total: Int(commits)))
        #expect(phases.contains(StoreProgress(phase: .replayingLog, completed: Int(commits), total: Int(commits))))
        #expect(phases.contains { $0.phase == .buildingIndex(entity: "Memo", index: "title,year") && $0.isFinished })

        // A rebuild of a healthy store changes nothing, and saves go on after it.
        _ = try store.rebuild()
        #expect(try Self.contents(of: store) == original)
        try Self.randomRun(in: path, saves: 20, generator: &generator)
        #expect(try store.check().isHealthy)
    }

    @Test func aRebuildThatFillsTheMapGrowsItAndRunsAgainToTheSameResult() throws {
        let path = directory.path("store")
        do {
            let context = ModelContext(
                try ModelContainer(
                    for: Memo.self,
                    configurations: ModelConfiguration(url: URL(fileURLWithPath: path), initialMapSize: 1 << 20)))
            for id in 0..<600 {
                context.insert(
                    Memo(id: "memo-\(id)", title: "\(id % 7)" + String(repeating: "t", count: 1_500), year: id))
                if id % 50 == 49 { try context.save() }
            }
        }
        // Opened with a map no larger than the data: the rebuild's new pages cannot all fit in it,
        // since LMDB keeps the old ones until the commit.
        let store = try Store(directory: path, options: StoreOptions(initialMapSize: 1 << 20), create: false)
        let original = try Self.contents(of: store)
        let mapBefore = store.mapSize
        let report = try store.rebuild()
        #expect(store.mapSize > mapBefore, "the map was \(mapBefore) bytes and did not grow")
        #expect(report.records == 600)
        #expect(try Self.contents(of: store) == original)
        #expect(try store.check().isHealthy)
    }

    @Test func aDamagedLogIsATypedErrorAndTheRebuildWritesNothing() throws {
        var generator = SeededGenerator(label: "rebuild-damaged")
        let path = directory.path("store")
        try Self.randomRun(in: path, saves: 30, generator: &generator)
        let store = try Store(directory: path, options: StoreOptions(), create: false)
        let log = store.log.database
        #expect(try store.read { try store.log.head(in: $0) } > 10)
        // An entry that does not decode, then a gap: each refuses the rebuild.
        try store.withWriteTransaction { txn in try txn.put([0xFF, 1, 2], for: LogEntry.key(for: 7), in: log) }
        try Self.clearProjections(of: store)
        let cleared = try Self.contents(of: store)
        let error = #expect(throws: RillError.self) { _ = try store.rebuild() }
        #expect(error?.code == .corruptStore)
        #expect(error?.message.contains("after commit 6") == true, "\(String(describing: error))")
        #expect(try Self.contents(of: store) == cleared)

        try store.withWriteTransaction { txn in _ = try txn.delete(LogEntry.key(for: 7), in: log) }
        let gap = #expect(throws: RillError.self) { _ = try store.rebuild() }
        #expect(gap?.code == .corruptStore)
        #expect(gap?.message.contains("commit 8 after commit 6") == true, "\(String(describing: gap))")
        #expect(try Self.contents(of: store) == cleared)
    }
}

/// A rebuild against other processes: a reader sees the records before it or after it, never a
/// mix; a writer's commits made meanwhile are kept.
@Suite struct RebuildConcurrencyTests {
    let directory = TemporaryDirectory()
    var helper: URL { buildProductsDirectory.appendingPathComponent("rill-test-helper") }

    /// A store of `count` Counters, saved in saves of 100.
    func makeStore(_ path: String, count: Int) throws {
        let context = ModelContext(
            try ModelContainer(for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path))))
        for id in 0..<count {
            context.insert(Counter(id: id, value: id, payload: String(repeating: "p", count: id % 300)))
            if id % 100 == 99 { try context.save() }
        }
        try context.save()
    }

    func start(_ arguments: [String]) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = helper
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
        return (process, output)
    }

    @Test func aReaderInAnotherProcessSeesTheStateBeforeOrAfterTheRebuildNeverAMix() throws {
        let path = directory.path("store")
        let count = 20_000
        try makeStore(path, count: count)
        let store = try Store(directory: path, options: StoreOptions(), create: false)
        // The state before: half the records gone behind the log's back. A rebuild seen half
        // done would count none of them (cleared) or some number in between (replaying).
        let entity = try #require(try store.entity(named: "Counter"))
        try store.withWriteTransaction { txn in
            for id in 0..<count / 2 { _ = try txn.delete(id.storageKey, in: entity.database) }
        }
        let stop = directory.path("stop")
        let (reader, output) = try start(["count-loop", path, stop, "\(count / 2)", "\(count)"])
        defer { if reader.isRunning { reader.terminate() } }
        // The reader has counted the cleared store at least once before the rebuild starts.
        var first = Data()
        while !String(decoding: first, as: UTF8.self).contains("counted\n") {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            first.append(data)
        }
        let report = try store.rebuild()
        #expect(report.records == count)
        usleep(200_000)
        _ = FileManager.default.createFile(atPath: stop, contents: nil)
        reader.waitUntilExit()
        let lines = String(decoding: first + output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(reader.terminationStatus == 0, "\(lines)")
        #expect(lines.contains("seen \(count / 2) "), "\(lines)")
        #expect(lines.contains("seen \(count) "), "\(lines)")
        #expect(try store.check().isHealthy)
    }

    @Test func aWritersCommitsDuringRebuildsAreKeptAndCheckPasses() throws {
        let path = directory.path("store")
        try makeStore(path, count: 2_000)
        let store = try Store(directory: path, options: StoreOptions(), create: false)
        let (writer, output) = try start(["random-saves", path, "\(UInt64.random(in: 1...1_000_000))", "200"])
        defer { if writer.isRunning { writer.terminate() } }
        var rebuilds = 0
        while writer.isRunning || rebuilds == 0 {
            _ = try store.rebuild()
            rebuilds += 1
        }
        writer.waitUntilExit()
        let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(writer.terminationStatus == 0)
        #expect(lines.hasSuffix("done\n"), "\(lines)")
        let check = try store.check()
        #expect(check.isHealthy, "after \(rebuilds) rebuilds: \(check.problems)")
        let head = try store.read { try store.log.head(in: $0) }
        #expect(check.commits == Int(head))
    }
}
