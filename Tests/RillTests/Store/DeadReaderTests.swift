import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// A reader process killed while holding a read transaction leaves its slot in the lock file;
/// a writer that keeps updating must not grow the file without bound because of it.
@Suite struct DeadReaderTests {
    let directory = TemporaryDirectory()

    @Test func fileStopsGrowingAfterAReaderIsKilledMidTransaction() throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = ModelContext(container)
        // 20,000 small records: a tree three levels deep. A save updating five records
        // anywhere rewrites about eight pages, while its log entry takes about 500 bytes.
        var random = SeededGenerator(label: "fileStopsGrowingAfterAReaderIsKilledMidTransaction")
        for start in stride(from: 0, to: 20_000, by: 5_000) {
            for id in start..<start + 5_000 { context.insert(Counter(id: id, value: 0, payload: "p\(id)")) }
            try context.save()
        }
        func update(round: Int) throws {
            for _ in 0..<5 { context.insert(Counter(id: Int.random(in: 0..<20_000, using: &random), value: round)) }
            try context.save()
        }

        // A helper process opens the store (this process has it open already, so no open of
        // this process will clear the slot), begins a read transaction, and is killed in it.
        let reader = Process()
        reader.executableURL = buildProductsDirectory.appendingPathComponent("rill-test-helper")
        reader.arguments = ["hold-read", path]
        let output = Pipe()
        reader.standardOutput = output
        try reader.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        #expect(line.hasPrefix("reading"), "\(line)")
        kill(reader.processIdentifier, SIGKILL)
        reader.waitUntilExit()

        // With the dead slot pinning its snapshot, no page freed since could be reused: each save
        // took new pages at the end of the file, about 13 (52 KiB) here. Cleared, the file grows
        // with the log only, well under a page a save.
        var sizes: [Int] = []
        for round in 1...300 {
            try update(round: round)
            if round % 50 == 0 { sizes.append(container.store.fileSize) }
        }
        let growth = sizes.last! - sizes.first!
        #expect(growth < 250 * 4_096, "data.mdb grew \(growth) bytes over 250 saves: \(sizes)")
        #expect(try container.store.clearStaleReaders() == 0, "the dead reader's slot is still there")
    }
}
