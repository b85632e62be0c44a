import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Crashes, several processes, and a map that must grow: the log stays gapless, nothing
/// acknowledged is lost, and the projections always equal a replay of the log.
@Suite struct DurabilityTests {
    let directory = TemporaryDirectory()

    var helper: URL { buildProductsDirectory.appendingPathComponent("rill-test-helper") }

    func spawn(_ arguments: [String], output: Pipe = Pipe()) throws -> Process {
        let process = Process()
        process.executableURL = helper
        process.arguments = arguments
        process.standardOutput = output
        try process.run()
        return process
    }

    @Test func everyAcknowledgedSaveSurvivesKillNine() throws {
        var random = SeededGenerator(label: "kill -9")
        let store = directory.path("store")
        var acknowledged: [UInt64] = []
        var kills = 0
        for _ in 0..<22 {
            let pipe = Pipe()
            let child = try spawn(["save-loop", store, String(random.next())], output: pipe)
            usleep(UInt32.random(in: 30_000...300_000, using: &random))
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            #expect(child.terminationReason == .uncaughtSignal)
            kills += 1
            let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            // A line cut by the kill has no newline and was never acknowledged.
            for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
                if let number = UInt64(line.dropFirst("saved ".count)) { acknowledged.append(number) }
            }
            let audit = try StoreAudit(directory: store)
            #expect(audit.isGapless, "log sequences \(audit.sequences.prefix(5))… head \(audit.head)")
            #expect(audit.projectionsMatchReplay)
            #expect(acknowledged.allSatisfy { $0 <= audit.head }, "an acknowledged save is missing")
        }
        #expect(kills >= 20)
        #expect(Set(acknowledged).count == acknowledged.count, "a sequence number was acknowledged twice")
        #expect(!acknowledged.isEmpty)
        print("[kill -9] \(kills) kills, \(acknowledged.count) acknowledged saves, all present")
    }

    @Test func twoProcessesWritingOneStoreShareOneGaplessLog() throws {
        let store = directory.path("store")
        let first = try spawn(["write", store, "alpha", "150"])
        let second = try spawn(["write", store, "beta", "150"])
        first.waitUntilExit()
        second.waitUntilExit()
        #expect(first.terminationStatus == 0)
        #expect(second.terminationStatus == 0)

        let audit = try StoreAudit(directory: store)
        #expect(audit.head == 300)
        #expect(audit.isGapless)
        #expect(audit.projectionsMatchReplay)
        let reopened = try Store(directory: store, options: .init(), create: false)
        let authors = try reopened.entries(after: 0).map { $0.author ?? "" }
        #expect(authors.filter { $0 == "alpha" }.count == 150)
        #expect(authors.filter { $0 == "beta" }.count == 150)
        #expect(audit.projected["Counter"]?.count == 300)
    }

    @Test func mapGrowsFromOneMebibyteWhileAnotherProcessReads() throws {
        var random = SeededGenerator(label: "map growth")
        let store = directory.path("store")
        let container = try ModelContainer(
            for: Counter.self,
            configurations: ModelConfiguration(url: URL(fileURLWithPath: store), initialMapSize: 1 << 20))
        let context = container.mainContext
        let stopFile = directory.path("stop")
        let readerOutput = Pipe()
        let reader = try spawn(["read-loop", store, stopFile], output: readerOutput)

        let target = 200 << 20
        var written = 0
        var nextID = 0
        var sequences: [UInt64] = []
        while written < target {
            var batch = 0
            while batch < 4 << 20 {
                // Mixed sizes: mostly small records, some large ones that take overflow pages.
                let size =
                    Int.random(in: 0..<10, using: &random) == 0
                    ? Int.random(in: 100_000...600_000, using: &random) : Int.random(in: 10...4_000, using: &random)
                context.insert(Counter(id: nextID, value: size, payload: String(repeating: "r", count: size)))
                nextID += 1
                batch += size
            }
            guard let sequence = try context.save() else {
                Issue.record("a save wrote nothing")
                break
            }
            sequences.append(sequence)
            written += batch
        }
        _ = FileManager.default.createFile(atPath: stopFile, contents: nil)
        reader.waitUntilExit()
        let report = String(decoding: readerOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)

        #expect(reader.terminationStatus == 0, "reader: \(report)")
        #expect(report.hasPrefix("reads "), "reader: \(report)")
        #expect(sequences == Array(1...UInt64(sequences.count)), "every save got the next sequence, once")
        #expect(try container.store.entryCount() == sequences.count, "no save was written twice")
        #expect(container.store.mapSize >= target)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Counter>()) == nextID)
        let audit = try StoreAudit(directory: store)
        #expect(audit.projectionsMatchReplay)
        print(
            "[map growth] \(written >> 20) MiB in \(sequences.count) saves; map \(container.store.mapSize >> 20) MiB; \(report)"
        )
    }
}
