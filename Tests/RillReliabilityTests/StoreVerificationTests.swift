import Foundation
import Rill
import RillTestSupport
import RillTorture
import Testing

/// The verification every suite ends with finds what it must: it passes on a sound store with
/// its acknowledged saves, and names an acknowledged save that the log lacks.
@Suite struct StoreVerificationTests {
    @Test func passesOnASoundStoreAndNamesAMissingSave() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("store")
        let container = try ModelContainer(
            for: TortureItem.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = ModelContext(container)
        var acknowledged: [AcknowledgedSave] = []
        for number in 0..<5 {
            context.insert(TortureItem(id: "w0-\(number)", writer: 0, number: number, payload: "x"))
            let sequence = try #require(try context.save())
            acknowledged.append(TortureWriter.acknowledged("ack \(sequence) insert w0-\(number)")!)
        }
        #expect(StoreVerification.verify(directory: path, acknowledged: acknowledged) == [])
        let invented = TortureWriter.acknowledged("ack 99 insert w0-99")!
        let problems = StoreVerification.verify(directory: path, acknowledged: acknowledged + [invented])
        #expect(problems == ["the acknowledged commit 99 is not in the log"])
        let wrong = TortureWriter.acknowledged("ack 2 insert w0-4")!
        #expect(
            StoreVerification.verify(directory: path, acknowledged: [wrong]) == [
                "commit 2 lacks the acknowledged write of TortureItem w0-4"
            ])
    }

    /// A writer killed in the middle of a line (a write to a file stops at a page's end once the
    /// kill is pending) acknowledged only its complete lines: a cut `ack 3 insert w1` is not a
    /// save of the record `w1`.
    @Test func aWritersOutputCountsOnlyItsCompleteLines() {
        let complete = "ack 1 insert w1-0\nack 2 update w1-0 insert w1-1\n"
        #expect(TortureWriter.acknowledged(inOutput: complete).map(\.sequence) == [1, 2])
        #expect(TortureWriter.acknowledged(inOutput: complete + "ack 3 insert w1").map(\.sequence) == [1, 2])
        #expect(TortureWriter.acknowledged(inOutput: "ack 3 insert w1").isEmpty)
        #expect(TortureWriter.acknowledged(inOutput: "").isEmpty)
        let saves = TortureWriter.acknowledged(inOutput: complete)
        #expect(saves.last?.changes.map(\.isDelete) == [false, false])
    }
}
