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

    func spawn(_ arguments: [String], output: Pipe = Pipe(), errors: Pipe? = nil) throws -> Process {
        let process = Process()
        process.executableURL = helper
        process.arguments = arguments
        process.standardOutput = output
        if let errors { process.standardError = errors }
        try process.run()
        return process
    }

    /// What a finished helper wrote to `errors`, for a failure's message.
    static func text(_ errors: Pipe) -> String {
        String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
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
            // A kill before the store's first commit leaves no store (or a creation the next child finishes):
            // nothing can have been acknowledged yet.
            guard let audit = try StoreAudit.ofStoreIfAny(in: store) else {
                #expect(acknowledged.isEmpty, "saves were acknowledged, but \(store) holds no store")
                continue
            }
            #expect(audit.isGapless, "log sequences \(audit.sequences.prefix(5))… head \(audit.head)")
            #expect(audit.projectionsMatchReplay)
            #expect(acknowledged.allSatisfy { $0 <= audit.head }, "an acknowledged save is missing")
        }
        #expect(kills >= 20)
        #expect(Set(acknowledged).count == acknowledged.count, "a sequence number was acknowledged twice")
        #expect(!acknowledged.isEmpty)
        print("[kill -9] \(kills) kills, \(acknowledged.count) acknowledged saves, all present")
    }

    @Test func killWhileCreatingTheStoreLeavesNoStoreOrAWholeOne() throws {
        var random = SeededGenerator(label: "kill during creation")
        var outcomes: [String: Int] = [:]
        for attempt in 0..<24 {
            let store = directory.path("store-\(attempt)")
            let pipe = Pipe()
            let child = try spawn(["save-loop", store, String(random.next())], output: pipe)
            // Early enough to land before, inside or just after the creation of the store.
            usleep(UInt32.random(in: 0...15_000, using: &random))
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let acknowledged = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().count
            let data = FileManager.default.contents(atPath: store + "/data.mdb")
            if let audit = try StoreAudit.ofStoreIfAny(in: store) {
                #expect(audit.isGapless && audit.projectionsMatchReplay)
                #expect(audit.head >= UInt64(acknowledged))
                outcomes[audit.head == 0 ? "empty store" : "saves", default: 0] += 1
            } else {
                #expect(acknowledged == 0, "saves were acknowledged, but \(store) holds no store")
                outcomes[data == nil ? "no data file" : "creation cut short", default: 0] += 1
            }
            // Whatever the kill left, the next process that saves finishes the store.
            let container = try ModelContainer(
                for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: store)))
            container.mainContext.insert(Counter(id: -1, value: 0))
            #expect(try container.mainContext.save() != nil)
        }
        print("[kill during creation] \(outcomes.sorted { $0.key < $1.key })")
    }

    @Test func processesCreatingOneStoreAtOnceAllKeepIt() throws {
        // Each round starts three writers on a path that holds nothing yet: whichever commits
        // the store's creation first, the others find it (none may take its databases for a
        // foreign environment's), and all their saves are in one gapless log.
        for round in 0..<10 {
            let store = directory.path("store-\(round)")
            let errors = [Pipe(), Pipe(), Pipe()]
            let writers = try zip(["alpha", "beta", "gamma"], errors).map {
                try spawn(["write", store, $0, "3"], errors: $1)
            }
            for writer in writers { writer.waitUntilExit() }
            for (index, writer) in writers.enumerated() {
                #expect(
                    writer.terminationStatus == 0, "round \(round): writer \(index): \(Self.text(errors[index]))")
            }
            let audit = try StoreAudit(directory: store)
            #expect(audit.head == 9, "round \(round)")
            #expect(audit.isGapless)
        }
    }

    @Test func twoProcessesWritingOneStoreShareOneGaplessLog() throws {
        let store = directory.path("store")
        let (firstErrors, secondErrors) = (Pipe(), Pipe())
        let first = try spawn(["write", store, "alpha", "150"], errors: firstErrors)
        let second = try spawn(["write", store, "beta", "150"], errors: secondErrors)
        first.waitUntilExit()
        second.waitUntilExit()
        #expect(first.terminationStatus == 0, "\(Self.text(firstErrors))")
        #expect(second.terminationStatus == 0, "\(Self.text(secondErrors))")

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
