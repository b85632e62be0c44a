import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// `rill backup` and `rill restore`, run as processes, beside writers in processes of their own.
@Suite struct BackupCommandTests {
    let directory = TemporaryDirectory()

    func rill(_ arguments: String...) throws -> ProcessRun { try runBuilt("rill", arguments) }

    func makeStore(_ name: String = "store", saves: Int = 3) throws -> String {
        let path = directory.path(name)
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        for index in 0..<saves {
            container.mainContext.insert(Counter(id: index, value: index))
            try container.mainContext.save()
        }
        return path
    }

    /// The `N` of a `{"seq":N}` line.
    func sequence(_ run: ProcessRun) -> Int? {
        let text = run.output.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("{\"seq\":"), text.hasSuffix("}") else { return nil }
        return Int(text.dropFirst("{\"seq\":".count).dropLast())
    }

    @Test func helpDescribesBothCommands() throws {
        let overview = try rill("--help")
        for command in ["backup", "restore"] {
            #expect(overview.output.contains(command))
            let help = try rill(command, "--help")
            #expect(help.status == 0)
            #expect(help.output.contains("USAGE: rill \(command)"))
        }
        #expect(try rill("backup", "--help").output.contains("read transaction of its own"))
        #expect(try rill("restore", "--help").output.contains("move it aside"))
        #expect(try rill("backup", "only-one").status == 64)
    }

    /// A backup killed at a random moment leaves no copy that is not whole: no `data.mdb` in a
    /// directory destination, no file at a file destination; at most the hidden staging
    /// directory, which is removed by hand (as Architecture.md says) before backing up there
    /// again. The store is untouched.
    @Test func aBackupCutShortLeavesNoCopyThatIsNotWhole() throws {
        var random = SeededGenerator(label: "backup cut short")
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Counter.self,
            configurations: ModelConfiguration(url: URL(fileURLWithPath: path), durability: .unsynced))
        for index in 0..<4_000 {
            container.mainContext.insert(
                Counter(id: index, value: index, payload: String(repeating: "p", count: 4_000)))
        }
        try container.mainContext.save()
        var interrupted = 0
        for round in 0..<12 {
            let destination = directory.path(round % 2 == 0 ? "backup-\(round)" : "backup-\(round).mdb")
            let process = Process()
            process.executableURL = buildProductsDirectory.appendingPathComponent("rill")
            process.arguments = ["backup", path, destination]
            process.standardOutput = Pipe()
            process.standardError = Pipe()
            try process.run()
            usleep(UInt32.random(in: 0...60_000, using: &random))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let killed = process.terminationReason == .uncaughtSignal
            if killed { interrupted += 1 }
            let whole = round % 2 == 0 ? destination + "/data.mdb" : destination
            if FileManager.default.fileExists(atPath: whole) {
                // It finished before the kill: then it is whole.
                let copy = round % 2 == 0 ? destination : directory.path("restored-\(round)")
                if round % 2 == 1 { _ = try Store.restore(backup: destination, to: copy) }
                let store = try Store(directory: copy, options: StoreOptions(readOnly: true), create: false)
                #expect(try store.check().isHealthy, "round \(round)")
            }
            // Whatever is left is the hidden staging directory alone.
            let parent = round % 2 == 0 ? destination : directory.path("")
            let left = (try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? []
            for name in left where name.hasPrefix(".rill-copy-") {
                try FileManager.default.removeItem(atPath: parent + "/" + name)
            }
            if round % 2 == 0, !FileManager.default.fileExists(atPath: whole) {
                let rest = (try? FileManager.default.contentsOfDirectory(atPath: destination)) ?? []
                #expect(rest.isEmpty, "round \(round): \(rest)")
                // Emptied, the destination takes a backup again.
                #expect(try rill("backup", path, destination).status == 0)
            }
        }
        print("[backup cut short] \(interrupted) of 12 backups killed before they finished")
        #expect(interrupted > 0, "no backup was cut short (seed \(random.seed))")
        #expect(try Store(directory: path, options: StoreOptions(), create: false).check().isHealthy)
    }

    @Test func aBackupUnderFourWriterProcessesPassesCheckAndEqualsTheSourceAtItsSequence() throws {
        let store = try makeStore(saves: 1)
        let writers = try ["alpha", "beta", "gamma", "delta"].map { author in
            let process = Process()
            process.executableURL = buildProductsDirectory.appendingPathComponent("rill-test-helper")
            process.arguments = ["write", store, author, "150"]
            process.standardOutput = Pipe()
            process.standardError = Pipe()
            try process.run()
            return process
        }
        let source = try Store(directory: store, options: StoreOptions(readOnly: true), create: false)
        while try source.entries(after: 0).count < 30 { usleep(2_000) }
        let backup = directory.path("backup")
        let result = try rill("backup", store, backup)
        for writer in writers { writer.waitUntilExit() }
        #expect(writers.allSatisfy { $0.terminationStatus == 0 })
        #expect(result.status == 0, "\(result.error)")
        let copied = try #require(sequence(result), "\(result.output)")
        #expect(copied >= 30 && copied <= 601)

        let check = try rill("check", backup)
        #expect(check.status == 0, "\(check.output)")
        #expect(check.output.contains("checked \(copied) commits"))
        // Same log up to the copy's sequence, and the copy's records equal a replay of it (its check).
        let copyLog = try rill("log", backup)
        let sourceLog = try rill("log", store, "--limit", String(copied))
        #expect(copyLog.status == 0 && sourceLog.status == 0)
        #expect(copyLog.output == sourceLog.output)
        #expect(copyLog.output.split(separator: "\n").count == copied)
    }

    @Test func aBackupOverAStoreOrANonEmptyDirectoryFailsAndWritesNothing() throws {
        let store = try makeStore()
        let other = try makeStore("other", saves: 1)
        let cluttered = directory.path("cluttered")
        try FileManager.default.createDirectory(atPath: cluttered, withIntermediateDirectories: false)
        _ = FileManager.default.createFile(atPath: cluttered + "/keep.txt", contents: Data("keep".utf8))
        for destination in [other, cluttered] {
            let before = try FileManager.default.contentsOfDirectory(atPath: destination).sorted()
            let data = FileManager.default.contents(atPath: destination + "/data.mdb")
            let result = try rill("backup", store, destination)
            #expect(result.status == 1)
            #expect(result.output.isEmpty)
            #expect(result.error.contains(destination), "\(result.error)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: destination).sorted() == before)
            #expect(FileManager.default.contents(atPath: destination + "/data.mdb") == data)
        }
        #expect(try rill("log", other).output.split(separator: "\n").count == 1)
    }

    @Test func aRestoreRoundTripsAndRefusesToReplaceAStore() throws {
        let store = try makeStore()
        let backup = directory.path("backup")
        #expect(sequence(try rill("backup", store, backup)) == 3)

        let restored = directory.path("restored")
        let restore = try rill("restore", backup, restored)
        #expect(restore.status == 0, "\(restore.error)")
        #expect(sequence(restore) == 3)
        #expect(try rill("check", restored).status == 0)
        #expect(try rill("log", restored).output == (try rill("log", store).output))
        #expect(try rill("export", restored, "Counter").output == (try rill("export", store, "Counter").output))

        let refused = try rill("restore", backup, store)
        #expect(refused.status == 1)
        #expect(refused.error.contains(store) && refused.error.contains("move it aside"), "\(refused.error)")
        #expect(try rill("log", store).output.split(separator: "\n").count == 3)
    }
}
