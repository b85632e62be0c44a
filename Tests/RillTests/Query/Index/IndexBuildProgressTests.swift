import Foundation
import RillTestSupport
import Testing

@testable import Rill

/// An index build reports its progress to the handler the app gives, and writes nothing to standard error, even when
/// it is a terminal: drawing a bar is the CLI's job.
@Suite struct IndexBuildProgressTests {
    let directory = TemporaryDirectory()

    @Test func aBuildReportsACountThatGrowsToTheTotalAndWritesNothingToStandardError() throws {
        let count = 3_000
        let child = Process()
        child.executableURL = buildProductsDirectory.appendingPathComponent("rill-test-helper")
        child.arguments = ["build-index", directory.path("store"), String(count)]
        let output = Pipe()
        let errors = Pipe()
        child.standardOutput = output
        child.standardError = errors
        try child.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        #expect(child.terminationStatus == 0, "\(errorText)")
        #expect(errorText.isEmpty)

        let lines = text.split(separator: "\n")
        #expect(lines.last == "stderr 0")
        let reports = lines.filter { $0.hasPrefix("progress ") }.map { $0.split(separator: " ", maxSplits: 3) }
        let completed = reports.compactMap { Int($0[1]) }
        #expect(completed == [0, 1024, 2048, count])
        #expect(reports.allSatisfy { $0[2] == "\(count)" && $0[3] == "building index Item(value)" })
    }

    @Test func reportsSayWhatIsBuiltAndWhenTheyAreTheLast() {
        let first = StoreProgress(phase: .buildingIndex(entity: "Book", index: "author,pages"), completed: 0, total: 9)
        #expect(first.description == "building index Book(author,pages): 0 of 9 records")
        #expect(!first.isFinished)
        let last = StoreProgress(phase: .replayingLog, completed: 9, total: 9)
        #expect(last.description == "replaying the log: 9 of 9 commits")
        #expect(last.isFinished)
    }
}
