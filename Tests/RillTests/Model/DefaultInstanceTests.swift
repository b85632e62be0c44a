import Foundation
import RillTestSupport
import Testing

@testable import Rill

/// `fetchOrInsert`: exactly one default instance, also when two processes ask at the same moment.
@Suite struct DefaultInstanceTests {
    let directory = TemporaryDirectory()

    @Test func theDefaultIsInsertedOnceAndFoundAgain() throws {
        let url = directory.url.appendingPathComponent("store")
        let container = try ModelContainer(for: Counter.self, configurations: ModelConfiguration(url: url))
        let context = container.mainContext
        let first = try context.fetchOrInsert(Counter.self, id: 1) { Counter(id: 1, value: 10) }
        #expect(first.value == 10)
        // Asked again, the stored one is returned and nothing is written.
        let head = try container.store.head()
        #expect(try context.fetchOrInsert(Counter.self, id: 1) { Counter(id: 1, value: 99) }.value == 10)
        #expect(try container.store.head() == head)
        // Changed and found again after a restart.
        context.insert(Counter(id: 1, value: 11))
        try context.save()
        let reopened = try ModelContainer(for: Counter.self, configurations: ModelConfiguration(url: url))
        #expect(try reopened.mainContext.fetchOrInsert(Counter.self, id: 1) { Counter(id: 1, value: 0) }.value == 11)
        let wrong = #expect(throws: RillError.self) {
            _ = try context.fetchOrInsert(Counter.self, id: 2) { Counter(id: 3, value: 0) }
        }
        #expect(wrong?.code == .misuse)
    }

    @Test func twoProcessesRacingToCreateTheDefaultEndUpWithExactlyOne() throws {
        let helper = buildProductsDirectory.appendingPathComponent("rill-test-helper")
        for round in 0..<12 {
            let path = directory.path("race-\(round)")
            // The store exists first, so that the race is the insert's alone.
            _ = try ModelContainer(
                for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
            var processes: [(Process, Pipe)] = []
            for value in [100, 200] {
                let process = Process()
                process.executableURL = helper
                process.arguments = ["default-instance", path, "\(value + round)"]
                let output = Pipe()
                process.standardOutput = output
                try process.run()
                processes.append((process, output))
            }
            _ = FileManager.default.createFile(atPath: path + ".go", contents: Data())
            var printed: [String] = []
            for (process, output) in processes {
                process.waitUntilExit()
                #expect(process.terminationStatus == 0)
                printed.append(
                    String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                        .trimmingCharacters(in: .whitespacesAndNewlines))
            }
            let store = try Store(directory: path, options: StoreOptions(readOnly: true), create: false)
            let entity = try #require(try store.entity(named: "Counter"))
            #expect(try store.recordCount(of: entity) == 1)
            #expect(try store.head() == 1, "round \(round): one insert commit, the other wrote nothing")
            #expect(
                printed[0] == printed[1] && ["\(100 + round)", "\(200 + round)"].contains(printed[0]), "\(printed)")
        }
    }
}
