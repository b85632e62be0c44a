import Foundation
import RillTestSupport
import RillWorkloads
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `rill serve`'s `progress` events (Protocol.md, "Progress"): a subscription whose results stay
/// as they are while commits go by moves its id forward, so that a reconnection resumes after
/// those commits; ids never go back, and a progress id names the results the subscriber holds —
/// checked against the daemon's own query answer recorded after every save.
@Suite struct ServeProgressTests {
    let directory = TemporaryDirectory()

    /// Saves `Counter(id, value)` through the daemon; its commit, nil when it changed nothing.
    static func save(_ writer: HTTPTestClient, id: Int, value: Int) -> UInt64? {
        let response = writer.request(
            "POST", "/v1/save",
            body: #"[{"op":"insert","entity":"Counter","record":{"id":\#(id),"value":\#(value),"payload":""}}]"#)
        #expect(response?.status == 200, "\(response?.body ?? "no response")")
        return (response?.json["seq"] as? NSNumber)?.uint64Value
    }

    static func encoded(_ query: String) -> String {
        query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? query
    }

    @Test func aQuietSubscriptionMovesItsIdAndResumesWithoutReplaying() throws {
        let path = try directory.counterStore(records: 10)
        let daemon = try DaemonProcess(
            store: path, arguments: ["--progress", "0.1", "--resume-limit", "5"], log: directory.path("serve.log"))
        let query = "Counter where value >= 1000 sort by value"
        let stream = EventStreamReader(try HTTPTestClient(unix: daemon.socket), query: query)
        let watcher = try RillProcess(["watch", "--json", "--progress", "0.1", "--connect", daemon.socket, query])
        #expect(stream.wait { !$0.isEmpty })
        #expect(watcher.wait { !$0.isEmpty })
        // Nothing below throws once the watch runs: a watch left running would hold the test's output.
        let start = stream.received.first?.id ?? 0

        // Twenty commits that leave the results as they are.
        let writer = try HTTPTestClient(unix: daemon.socket)
        var head: UInt64 = 0
        for round in 0..<20 {
            head = Self.save(writer, id: round % 10, value: 100 + round) ?? head
            usleep(UInt32.random(in: 0...20_000))
        }
        #expect(stream.wait { $0.last?.id == head }, "a progress event reaches commit \(head)")
        let events = stream.received
        #expect(events.first?.name == "results")
        #expect(events.dropFirst().allSatisfy { $0.name == "progress" }, "\(events.map(\.name))")
        let ids = events.map(\.id)
        #expect(ids == ids.sorted() && Set(ids).count == ids.count, "ids only grow: \(ids)")
        #expect(events.dropFirst().allSatisfy { $0.data == #"{"seq":\#($0.id)}"# })
        #expect(watcher.wait { $0.last == #"{"seq":\#(head)}"# }, "rill watch --connect prints the progress line")

        // From the progress id, the reconnection replays nothing: no reset although the results
        // are 20 commits (past the resume limit of 5) older, and the next change comes first.
        shutdown(stream.client.fd, Int32(SHUT_RDWR))
        let resumed = EventStreamReader(try HTTPTestClient(unix: daemon.socket), query: query, lastEventID: head)
        let fromStart = EventStreamReader(try HTTPTestClient(unix: daemon.socket), query: query, lastEventID: start)
        #expect(fromStart.wait { !$0.isEmpty })
        #expect(fromStart.received.first?.name == "reset", "without progress, 20 commits to replay: a reset")
        let entered = Self.save(writer, id: 3, value: 5_000)
        #expect(resumed.wait { !$0.isEmpty })
        #expect(daemon.logs("from commit \(head)"), "\(daemon.logText)")
        #expect(resumed.received.first?.name == "change" && resumed.received.first?.id == entered)
        #expect(watcher.wait { $0.last.map(ResultsLines.sequence) == entered })
        #expect(watcher.stop(SIGTERM) == 0)
        #expect(daemon.stop() == 0)
    }

    @Test func progressIDsNeverGoBackAndNameTheResultsHeld() throws {
        var random = SeededGenerator(label: "serve progress")
        let path = try directory.counterStore(records: 20)
        let daemon = try DaemonProcess(
            store: path, arguments: ["--progress", "0.02"], log: directory.path("serve.log"))
        let queries = [
            "Counter where value >= 950 sort by value desc limit 3", "Counter where value < 3 sort by id",
            "Counter sort by value limit 4 offset 2",
        ]
        let writer = try HTTPTestClient(unix: daemon.socket)
        // The results after every commit, as the daemon answers a query.
        var history: [UInt64: [[NSDictionary]]] = [:]
        func record() throws {
            var sequence: UInt64?
            var results: [[NSDictionary]] = []
            for query in queries {
                let answer = try #require(writer.request("GET", "/v1/query?q=" + Self.encoded(query)))
                sequence = (answer.json["seq"] as? NSNumber)?.uint64Value
                results.append(answer.json["results"] as? [NSDictionary] ?? [])
            }
            history[try #require(sequence)] = results
        }
        try record()
        let streams = try queries.map { EventStreamReader(try HTTPTestClient(unix: daemon.socket), query: $0) }
        for stream in streams { #expect(stream.wait { !$0.isEmpty }) }
        var head: UInt64 = 0
        for _ in 0..<OracleScale.value("RILL_SERVE_PROGRESS_SAVES", default: 150) {
            let id = Int.random(in: 0..<30, using: &random)
            guard let sequence = Self.save(writer, id: id, value: Int.random(in: 0..<1_000, using: &random)) else {
                continue
            }
            head = sequence
            try record()
            if Int.random(in: 0..<4, using: &random) == 0 { usleep(UInt32.random(in: 0...30_000, using: &random)) }
        }
        for (index, stream) in streams.enumerated() {
            #expect(stream.wait { $0.last?.id == head }, "\(queries[index]): reaches commit \(head)")
            let events = stream.received
            let ids = events.map(\.id)
            #expect(ids == ids.sorted() && Set(ids).count == ids.count, "\(queries[index]): ids only grow")
            var records: [NSDictionary] = []
            for event in events {
                records = ServeTests.replay([(event.name, event.data)], startingFrom: records)
                if event.name == "progress" {
                    #expect(
                        records == history[event.id]?[index],
                        "\(queries[index]): the results held at progress \(event.id) are those of that commit")
                }
            }
            #expect(events.contains { $0.name == "progress" }, "\(queries[index]): some progress")
        }
        #expect(daemon.stop() == 0)
    }

    @Test func aSubscriptionChoosesItsIntervalOrNone() throws {
        let path = try directory.counterStore(records: 3)
        let daemon = try DaemonProcess(
            store: path, arguments: ["--progress", "0.05"], log: directory.path("serve.log"))
        let query = Self.encoded("Counter where value > 100")
        let silent = try HTTPTestClient(unix: daemon.socket)
        silent.send(Array("GET /v1/subscribe?q=\(query)&progress=0 HTTP/1.1\r\nHost: rill\r\n\r\n".utf8))
        let quiet = EventStreamReader(silent, query: nil)
        let chosen = try HTTPTestClient(unix: daemon.socket)
        chosen.send(Array("GET /v1/subscribe?q=\(query)&progress=0.1 HTTP/1.1\r\nHost: rill\r\n\r\n".utf8))
        let frequent = EventStreamReader(chosen, query: nil)
        #expect(quiet.wait { !$0.isEmpty } && frequent.wait { !$0.isEmpty })
        let writer = try HTTPTestClient(unix: daemon.socket)
        var head: UInt64 = 0
        for round in 0..<5 { head = Self.save(writer, id: round, value: 10 + round) ?? head }
        #expect(frequent.wait { $0.last?.id == head })
        let entered = Self.save(writer, id: 9, value: 500)
        #expect(quiet.wait { $0.count == 2 })
        #expect(quiet.received.map(\.name) == ["results", "change"] && quiet.received.last?.id == entered)

        let refused = try HTTPTestClient(unix: daemon.socket).request("GET", "/v1/subscribe?q=\(query)&progress=soon")
        #expect(refused?.status == 400)
        #expect(refused?.body.contains(#""code":"badParameter""#) == true, "\(refused?.body ?? "")")
        #expect(daemon.stop() == 0)
    }
}
