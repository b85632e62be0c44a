import Foundation
import RillLocks
import RillStorage
import RillTestSupport
import Testing

@testable import Rill

/// `Store.backup(to:)` and `Store.restore(backup:to:)`: a copy of one commit while writers run, never over
/// anything, and back.
@Suite struct BackupTests {
    let directory = TemporaryDirectory()

    var helper: URL { buildProductsDirectory.appendingPathComponent("rill-test-helper") }

    func makeStore(_ name: String = "store", saves: Int = 3) throws -> Store {
        let path = directory.path(name)
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = container.mainContext
        for index in 0..<saves {
            context.insert(Counter(id: index, value: index))
            try context.save()
        }
        return try Store(directory: path, options: StoreOptions(), create: false)
    }

    /// Every entity's records, key to stored bytes, by entity.
    func records(of store: Store) throws -> [String: [[UInt8]: [UInt8]]] {
        try StoreAudit(directory: store.directory).projected
    }

    @Test func aBackupUnderFourWritersPassesCheckAndEqualsTheSourceAtItsSequence() throws {
        let source = try makeStore(saves: 1)
        var writers: [(Process, Pipe)] = []
        for author in ["alpha", "beta", "gamma", "delta"] {
            let process = Process()
            process.executableURL = helper
            process.arguments = ["write", source.directory, author, "200"]
            let errors = Pipe()
            process.standardOutput = Pipe()
            process.standardError = errors
            try process.run()
            writers.append((process, errors))
        }
        // Wait until the writers are under way, so that the copy is taken between their commits.
        while try source.entries(after: 0).count < 40 { usleep(2_000) }
        let backup = directory.path("backup")
        let sequence = try source.backup(to: backup)
        let headAfter = try source.read { try source.log.head(in: $0) }
        for (writer, errors) in writers {
            writer.waitUntilExit()
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(writer.terminationStatus == 0, "\(text)")
        }
        #expect(sequence >= 40)
        #expect(headAfter >= sequence)
        print(
            "[backup] copied at commit \(sequence), head \(headAfter) then, \(try source.entries(after: 0).count) at the end"
        )

        let copy = try Store(directory: backup, options: StoreOptions(readOnly: true), create: false)
        let report = try copy.check()
        #expect(report.isHealthy, "\(report.problems)")
        #expect(report.commits == Int(sequence))
        // The copy's log is the source's up to the copy's sequence, and its records and indexes equal a replay
        // of that log (its check): it is the source as of that commit.
        let copied = try copy.entries(after: 0)
        #expect(copied == (try source.entries(after: 0, limit: Int(sequence))))
        #expect(copied.last?.sequence == sequence)
        #expect(try copy.read { try copy.log.head(in: $0) } == sequence)
    }

    @Test func aBackupToOneFileUnderFourWritersRestoresToTheSourceAtItsSequence() throws {
        let source = try makeStore(saves: 1)
        var writers: [Process] = []
        for author in ["alpha", "beta", "gamma", "delta"] {
            let process = Process()
            process.executableURL = helper
            process.arguments = ["write", source.directory, author, "150"]
            process.standardOutput = Pipe()
            try process.run()
            writers.append(process)
        }
        while try source.entries(after: 0).count < 30 { usleep(2_000) }
        let file = directory.path("nightly.mdb")
        let sequence = try source.backup(to: file)
        for writer in writers {
            writer.waitUntilExit()
            #expect(writer.terminationStatus == 0)
        }
        var isDirectory: ObjCBool = true
        #expect(FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) && !isDirectory.boolValue)
        // Nothing is left beside it.
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path(""))
        #expect(!names.contains { $0.hasPrefix(".rill-copy-") }, "\(names)")
        let restored = directory.path("restored")
        #expect(try Store.restore(backup: file, to: restored) == sequence)
        let copy = try Store(directory: restored, options: StoreOptions(readOnly: true), create: false)
        #expect(try copy.check().isHealthy)
        #expect(try copy.entries(after: 0) == (try source.entries(after: 0, limit: Int(sequence))))
        // A file that exists is never replaced.
        let again = #expect(throws: RillError.self) { try source.backup(to: file) }
        #expect(again?.code == .destinationNotEmpty && again?.message.contains("exists (a file)") == true)
        #expect(try Store.restore(backup: file, to: directory.path("second")) == sequence)
    }

    @Test func aBackupOfAQuietStoreHoldsItsRecords() throws {
        let source = try makeStore()
        let backup = directory.path("backup")
        #expect(try source.backup(to: backup) == 3)
        let names = try FileManager.default.contentsOfDirectory(atPath: backup)
        #expect(names == ["data.mdb"], "no staging left behind")
        let copy = try Store(directory: backup, options: StoreOptions(readOnly: true), create: false)
        #expect(try records(of: copy) == (try records(of: source)))
        #expect(try copy.entries(after: 0) == (try source.entries(after: 0)))
    }

    @Test func aBackupIntoAnEmptyDirectoryIsAllowed() throws {
        let source = try makeStore()
        let backup = directory.path("empty")
        try FileManager.default.createDirectory(atPath: backup, withIntermediateDirectories: false)
        #expect(try source.backup(to: backup) == 3)
    }

    @Test func aBackupRefusesADirectoryThatIsNotEmptyAndWritesNothing() throws {
        let source = try makeStore()
        let other = try makeStore("other", saves: 1)
        let otherBefore = try Data(contentsOf: URL(fileURLWithPath: other.directory + "/data.mdb"))
        let cluttered = directory.path("cluttered")
        try FileManager.default.createDirectory(atPath: cluttered, withIntermediateDirectories: false)
        _ = FileManager.default.createFile(atPath: cluttered + "/notes.txt", contents: Data("keep".utf8))
        let plainFile = directory.path("plain")
        _ = FileManager.default.createFile(atPath: plainFile, contents: Data("x".utf8))

        for destination in [cluttered, other.directory, plainFile] {
            let before = try? FileManager.default.contentsOfDirectory(atPath: destination)
            let error = #expect(throws: RillError.self) { try source.backup(to: destination) }
            #expect(error?.code == .destinationNotEmpty)
            #expect(error?.message.contains(destination) == true, "\(error?.message ?? "")")
            #expect((try? FileManager.default.contentsOfDirectory(atPath: destination)) == before)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: other.directory + "/data.mdb")) == otherBefore)
        #expect(try other.entries(after: 0).count == 1)
    }

    @Test func twoBackupsToOnePathAtOnceLeaveOneWholeCopy() throws {
        let source = try makeStore()
        for round in 0..<20 {
            let destination = directory.path("race-\(round)")
            let outcomes = Lock<[Result<UInt64, any Error>]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { _ in
                let outcome = Result<UInt64, any Error> { try source.backup(to: destination) }
                outcomes.withLock { $0.append(outcome) }
            }
            let results = outcomes.withLock { $0 }
            #expect(results.compactMap { try? $0.get() } == [3], "round \(round): \(results)")
            let failures = results.compactMap { result -> RillError? in
                if case .failure(let error) = result { return error as? RillError }
                return nil
            }
            #expect(failures.map(\.code) == [.destinationNotEmpty], "round \(round): \(failures)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: destination) == ["data.mdb"])
        }
    }

    @Test func aRestoreBringsTheBackupBackAsAStore() throws {
        let source = try makeStore()
        let backup = directory.path("backup")
        try source.backup(to: backup)
        let restored = directory.path("nested-parent/restored")
        try FileManager.default.createDirectory(
            atPath: directory.path("nested-parent"), withIntermediateDirectories: false)
        #expect(try Store.restore(backup: backup, to: restored) == 3)
        let store = try Store(directory: restored, options: StoreOptions(), create: false)
        #expect(try store.check().isHealthy)
        #expect(try records(of: store) == (try records(of: source)))
        #expect(try store.entries(after: 0) == (try source.entries(after: 0)))
        // The restored store is a store of its own: it takes writes.
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: restored)))
        container.mainContext.insert(Counter(id: 99, value: 99))
        try container.mainContext.save()
        #expect(try container.lastSequence() == 4)
    }

    @Test func aRestoreRefusesToReplaceAStore() throws {
        let source = try makeStore()
        let backup = directory.path("backup")
        try source.backup(to: backup)
        let existing = try makeStore("existing", saves: 2)
        let error = #expect(throws: RillError.self) { try Store.restore(backup: backup, to: existing.directory) }
        #expect(error?.code == .destinationNotEmpty)
        #expect(error?.message.contains(existing.directory) == true)
        #expect(error?.message.contains("move it aside") == true, "\(error?.message ?? "")")
        #expect(try existing.entries(after: 0).count == 2)
        #expect(try existing.check().isHealthy)
    }

    @Test func aRestoreRefusesABackupThatFailsItsCheck() throws {
        let source = try makeStore()
        // A record the log does not explain: the projection differs from a replay.
        let entity = try #require(try source.entity(named: "Counter"))
        try source.withWriteTransaction { txn in
            try txn.put([1, 2, 3], for: Array("zz".utf8), in: entity.database)
        }
        let restored = directory.path("restored")
        let error = #expect(throws: RillError.self) { try Store.restore(backup: source.directory, to: restored) }
        #expect(error?.code == .corruptStore)
        #expect(!FileManager.default.fileExists(atPath: restored))
    }
}
