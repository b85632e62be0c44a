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
}
