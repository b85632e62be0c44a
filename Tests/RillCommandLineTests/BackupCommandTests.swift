import Foundation
import RillTestSupport
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
