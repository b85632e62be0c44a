import Testing

@testable import Rill
@testable import RillService

/// The events of a subscription as they are framed on the stream (Protocol.md, "Subscriptions").
@Suite struct ServerSentEventTests {
    let rows = [QueryRow(key: [], record: .map([RecordField(name: "id", value: .int(1))]))]

    @Test func resultsResetsAndChangesCarryTheirCommit() {
        #expect(
            ServerSentEvent.results(rows, sequence: 7).framed
                == "event: results\nid: 7\ndata: {\"seq\":7,\"results\":[{\"id\":1}]}\n\n")
        #expect(ServerSentEvent.results(rows, sequence: 7, reset: true).name == "reset")
        let change = ResultsChange<QueryRow>(
            sequence: 8, removals: [.init(offset: 0, element: rows[0])], insertions: [], moves: [], updates: [])
        let event = ServerSentEvent.change(change)
        #expect(event.name == "change")
        #expect(event.id == "8")
        #expect(event.framed.hasPrefix("event: change\nid: 8\ndata: {\"seq\":8,\"removals\":[{\"offset\":0,"))
    }

    @Test func progressCarriesItsCommitAsIdAndSeq() {
        #expect(ServerSentEvent.progress(12).framed == "event: progress\nid: 12\ndata: {\"seq\":12}\n\n")
    }

    @Test func aFailureHasNoIdAndTheErrorBody() {
        #expect(
            ServerSentEvent.failure(RillError(.storage, "gone")).framed
                == "event: error\ndata: {\"error\":{\"code\":\"storage\",\"message\":\"gone\"}}\n\n")
    }

    @Test func changesReadBackFromTheirData() throws {
        let change = ResultsChange<QueryRow>(
            sequence: 9, removals: [], insertions: [.init(offset: 0, element: rows[0])], moves: [], updates: [])
        let data = ServerSentEvent.change(change).data
        let read = try #require(RecordLiveQuery.change(fromJSON: try JSONReader.parse(Array(data.utf8))))
        #expect(read.sequence == 9)
        #expect(read.insertions.map(\.offset) == [0])
        #expect(read.insertions.map(\.element.record) == rows.map(\.record))
    }

    @Test func framedEventsParseBackLineByLine() {
        let events = [
            ServerSentEvent.results(rows, sequence: 7), ServerSentEvent.progress(9),
            ServerSentEvent.failure(RillError(.storage, "gone")),
        ]
        let stream = ServerSentEvent.streamStart + events.map(\.framed).joined(separator: ServerSentEvent.keepAlive)
        var parser = ServerSentEventParser()
        let read = stream.split(separator: "\n", omittingEmptySubsequences: false).compactMap {
            parser.take(line: String($0))
        }
        #expect(read == events)
    }

    @Test func theParserTakesWhatAnyServerMaySend() {
        var parser = ServerSentEventParser()
        let lines = ["event:change\r", "data: one", "data:two", "retry: 5", ": comment", "", "", "data", ""]
        let read = lines.compactMap { parser.take(line: $0) }
        #expect(read == [ServerSentEvent(name: "change", data: "one\ntwo"), ServerSentEvent(data: "")])
    }
}
