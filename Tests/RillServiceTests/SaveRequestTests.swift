import Foundation
import RillTestSupport
import Testing

@testable import Rill
@testable import RillService

/// A save's body as the daemon reads it, and a JSON save as every writer runs it.
@Suite struct SaveRequestTests {
    let directory = TemporaryDirectory()

    func request(_ text: String) throws -> SaveRequest {
        try SaveRequest(json: try JSONReader.parse(Array(text.utf8)))
    }

    /// A store of three `Counter`s, through a container (which keeps it open).
    func counters() throws -> (ModelContainer, Store) {
        let path = try directory.counterStore(records: 3)
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        return (container, container.store)
    }

    func refusal(_ text: String) -> String? {
        do {
            _ = try request(text)
            return nil
        } catch let error as RillError {
            #expect(error.code == .invalidRecord)
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func readsAnEnvelopeOrABareArray() throws {
        let envelope = try request(
            #"{"author":"ann","changes":[{"op":"insert","entity":"Counter","record":{"id":1,"value":2}}]}"#)
        #expect(envelope.author == "ann")
        #expect(envelope.changes.map(\.entity) == ["Counter"])
        #expect(envelope.changes.map(\.operation) == [.insert])
        let bare = try request(
            #"[{"op":"delete","entity":"Counter","id":1},{"op":"delete","entity":"Counter","id":2}]"#)
        #expect(bare.author == nil)
        #expect(bare.changes.map(\.id) == [.int(1), .int(2)])
        #expect(try request(#"{"author":null,"changes":[{"op":"delete","entity":"A","id":1}]}"#).author == nil)
    }

    @Test func refusesOtherShapesNamingWhatIsWrong() {
        #expect(refusal(#"{"changes":[],"by":"ann"}"#) == #"a save has no field "by" (it has author, changes)"#)
        #expect(refusal(#"{"author":"ann"}"#) == #"a save needs "changes", an array"#)
        #expect(
            refusal(#"{"author":7,"changes":[{"op":"delete","entity":"A","id":1}]}"#) == #""author" must be a string"#)
        #expect(refusal("42") == "a save is an object or an array of changes")
        #expect(refusal("[]") == "no changes")
        #expect(
            refusal(#"[{"op":"delete","entity":"A","id":1},{"op":"drop","entity":"A","id":2}]"#)
                == #"change 2: unknown op "drop" (use insert, update or delete)"#)
    }

    @Test func aSaveAnswersItsCommitOrNullWhenNothingChanged() throws {
        let (container, store) = try counters()
        defer { withExtendedLifetime(container) {} }
        let first = try store.save(
            [
                try JSONChange(
                    json: try JSONReader.parse(Array(#"{"id":7,"value":1,"payload":""}"#.utf8)),
                    defaultOperation: .insert, defaultEntity: "Counter")
            ],
            author: "test")
        let sequence = try #require(first.sequence)
        #expect(first.json == #"{"seq":\#(sequence)}"#)
        #expect(try store.head() == sequence)
        #expect(SaveResult(sequence: nil).json == #"{"seq":null}"#)
    }

    @Test func aChangeThatFailsWritesNothingAndNeverReachesTheCommit() throws {
        let (container, store) = try counters()
        defer { withExtendedLifetime(container) {} }
        let head = try store.head()
        var reachedCommit = false
        #expect(throws: RillError.self) {
            _ = try store.save(
                [
                    try JSONChange(
                        json: try JSONReader.parse(Array(#"{"op":"insert","entity":"Nope","record":{"id":1}}"#.utf8)))
                ],
                author: nil
            ) { reachedCommit = true }
        }
        #expect(!reachedCommit)
        #expect(try store.head() == head)
    }
}
