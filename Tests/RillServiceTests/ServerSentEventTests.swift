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

    @Test func movesAndUpdatesCarryTheRecordBeforeAndReadItBack() throws {
        func row(_ id: Int64, _ title: String) -> QueryRow {
            QueryRow(
                key: [],
                record: .map([
                    RecordField(name: "id", value: .int(id)), RecordField(name: "title", value: .string(title)),
                ]))
        }
        let change = ResultsChange<QueryRow>(
            sequence: 10, removals: [.init(offset: 2, element: row(3, "Gone"))], insertions: [],
            moves: [.init(from: 0, to: 1, oldElement: row(1, "Dune"), element: row(1, "Emma"))],
            updates: [.init(oldOffset: 1, offset: 0, oldElement: row(2, "Kim"), element: row(2, "Kiln"))])
        // Rows without a key have a null id.
        let data = ServerSentEvent.change(change).data
        #expect(
            data.contains(
                #""updates":[{"oldOffset":1,"offset":0,"id":null,"record":{"id":2,"title":"Kiln"},"before":{"id":2,"title":"Kim"}}]"#
            ))
        #expect(
            data.contains(
                #""moves":[{"from":0,"to":1,"id":null,"record":{"id":1,"title":"Emma"},"before":{"id":1,"title":"Dune"}}]"#
            ))
        #expect(data.contains(#""removals":[{"offset":2,"id":null,"record":{"id":3,"title":"Gone"}}]"#))
        let read = try #require(RecordLiveQuery.change(fromJSON: try JSONReader.parse(Array(data.utf8))))
        #expect(read.moves.map(\.oldElement.record) == [row(1, "Dune").record])
        #expect(read.moves.map(\.element.record) == [row(1, "Emma").record])
        #expect(read.updates.map(\.oldElement.record) == [row(2, "Kim").record])
        #expect(read.updates.map(\.element.record) == [row(2, "Kiln").record])
        #expect(read.removals.map(\.element.record) == [row(3, "Gone").record])

        // A daemon older than `before`: both elements are the record as it is.
        let older =
            #"{"seq":10,"removals":[],"insertions":[],"moves":[],"updates":[{"oldOffset":0,"offset":0,"id":2,"record":{"id":2,"title":"Kiln"}}]}"#
        let readOlder = try #require(RecordLiveQuery.change(fromJSON: try JSONReader.parse(Array(older.utf8))))
        #expect(readOlder.updates.map(\.oldElement.record) == [row(2, "Kiln").record])
        #expect(readOlder.updates.map(\.element.record) == [row(2, "Kiln").record])
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
