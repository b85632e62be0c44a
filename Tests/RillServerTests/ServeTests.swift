import Foundation
import RillLocks
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill
@testable import RillHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// `rill serve` end to end: the built daemon, real sockets, other processes writing.
@Suite struct ServeTests {
    let directory = TemporaryDirectory()

    // MARK: - Helpers

    /// Replays results/reset and change data (Protocol.md) to the final records.
    static func replay(
        _ events: [(name: String, data: String)], startingFrom start: [NSDictionary] = []
    ) -> [NSDictionary] {
        var records = start
        for event in events {
            let object = ResultsLines.object(event.data)
            if event.name == "results" || event.name == "reset" || object["results"] != nil {
                records = object["results"] as? [NSDictionary] ?? []
            } else {
                records = ResultsLines.apply([event.data], to: records)
            }
        }
        return records
    }

    func makeStore() throws -> (String, ModelContainer) {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = ModelContext(container)
        for id in 0..<40 { context.insert(Counter(id: id, value: id * 2, payload: "p\(id)")) }
        try context.save()
        return (path, container)
    }

    static func runningProcess(_ executable: String, _ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = buildProductsDirectory.appendingPathComponent(executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return process
    }

    // MARK: - Tests

    @Test func watchersOfEveryKindReplayToTheFinalResults() throws {
        let (path, _) = try makeStore()
        let daemon = try DaemonProcess(store: path, log: directory.path("serve.log"))
        let query = "Counter where value >= 20 sort by value desc limit 15"

        let remote = try RillProcess(["watch", "--json", "--connect", daemon.socket, query])
        let local = try RillProcess(["watch", "--json", path, query])
        let raw = EventStreamReader(try HTTPTestClient(unix: daemon.socket), query: query)
        #expect(remote.wait { !$0.isEmpty })
        #expect(local.wait { !$0.isEmpty })
        #expect(raw.wait { !$0.isEmpty })

        // A library process and an HTTP writer, at once.
        var random = SeededGenerator(label: "serve writers")
        let library = try Self.runningProcess(
            "rill-test-helper", ["random-saves", path, String(random.next()), "1000"])
        let writer = try HTTPTestClient(unix: daemon.socket)
        var acknowledged = 0
        var reconnected: EventStreamReader?
        var firstPart: [(name: String, id: UInt64, data: String)] = []
        for round in 0..<1000 {
            var changes: [String] = []
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let id = Int.random(in: 0..<60, using: &random)
                if Int.random(in: 0..<4, using: &random) == 0 {
                    changes.append(#"{"op":"delete","entity":"Counter","id":\#(id)}"#)
                } else {
                    let value = Int.random(in: 0..<100, using: &random)
                    changes.append(
                        #"{"op":"insert","entity":"Counter","record":{"id":\#(id),"value":\#(value),"payload":"h"}}"#)
                }
            }
            let response = writer.request("POST", "/v1/save", body: "[" + changes.joined(separator: ",") + "]")
            #expect(response?.status == 200, "save \(round): \(response?.body ?? "no response")")
            if response?.status == 200 { acknowledged += 1 }
            // Midway, the raw subscriber drops its connection and comes back with its last id.
            if round == 400 {
                firstPart = raw.received
                shutdown(raw.client.fd, Int32(SHUT_RDWR))
                reconnected = EventStreamReader(
                    try HTTPTestClient(unix: daemon.socket), query: query, lastEventID: firstPart.last!.id)
            }
        }
        library.waitUntilExit()
        #expect(library.terminationStatus == 0)
        #expect(acknowledged == 1000)
        // A last save that surely changes the results.
        let last = writer.request(
            "POST", "/v1/save",
            body: #"[{"op":"insert","entity":"Counter","record":{"id":999,"value":1000,"payload":""}}]"#)
        let head = try #require((last?.json["seq"] as? NSNumber)?.uint64Value)
        let final = try #require(
            writer.request("GET", "/v1/query?q=" + query.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!))
        let expected = (final.json["results"] as? [NSDictionary]) ?? []
        #expect(expected.count == 15)

        for watcher in [remote, local] {
            #expect(watcher.wait { $0.last.map(ResultsLines.sequence) == head })
            #expect(watcher.stop(SIGINT) == 0)
            let lines = watcher.output
            #expect(Self.replay(lines.map { ("", $0) }) == expected)
            // Every move and update carries the record as it was.
            var mismatches: [String] = []
            _ = ResultsLines.apply(
                lines.dropFirst(), to: Self.replay(lines.prefix(1).map { ("", $0) }), beforeMismatches: &mismatches)
            #expect(mismatches.isEmpty, "\(mismatches.prefix(3))")
            #expect(lines.contains { $0.contains(#""before":"#) })
        }
        let second = try #require(reconnected)
        #expect(second.wait { $0.last?.id == head })
        let joined = firstPart + second.received
        #expect(Self.replay(joined.map { ($0.name, $0.data) }) == expected)
        let ids = joined.dropFirst().map(\.id)
        #expect(
            ids == ids.sorted() && Set(ids).count == ids.count, "no change lost or repeated across the reconnection")
        // The same commits changed the results, to the same results after each, as for a steady
        // watcher. (How a change is spelled may differ: a resumed query holds more rows, and a
        // row it holds that a commit touched can be told as an update where the other tells
        // nothing.)
        func states(_ lines: [(name: String, data: String)]) -> [UInt64: [NSDictionary]] {
            var states: [UInt64: [NSDictionary]] = [:]
            var records = Self.replay(Array(lines.prefix(1)))
            // Progress events and lines change nothing, and come at moments of their own.
            for line in lines.dropFirst() where line.name != "progress" && !ResultsLines.isProgress(line.data) {
                records = Self.replay([line], startingFrom: records)
                states[(ResultsLines.object(line.data)["seq"] as? NSNumber)?.uint64Value ?? 0] = records
            }
            return states
        }
        let steadyStates = states(remote.output.map { ("", $0) })
        let joinedStates = states(joined.map { ($0.name, $0.data) })
        #expect(steadyStates.keys.sorted() == joinedStates.keys.sorted(), "the same commits changed the results")
        #expect(steadyStates == joinedStates, "the same results after each commit as a steady watcher")
        #expect(daemon.stop() == 0)
    }

    @Test func badRequestsGetJSONErrorsWhileOthersAreServed() throws {
        let (path, container) = try makeStore()
        let daemon = try DaemonProcess(
            store: path, arguments: ["--max-body", "4096"], log: directory.path("serve.log"))
        let query = "Counter sort by value desc limit 5"
        let stream = EventStreamReader(try HTTPTestClient(unix: daemon.socket), query: query)
        #expect(stream.wait { !$0.isEmpty })
        let headBefore = try container.store.head()

        let good = try HTTPTestClient(unix: daemon.socket)
        let cases: [(String, String, Int, String)] = [
            ("garbage request line", "GARBAGE\r\n\r\n", 400, "malformedRequest"),
            ("HTTP/2", "GET /v1/health HTTP/2.0\r\n\r\n", 505, "httpVersionNotSupported"),
            ("header without colon", "GET /v1/health HTTP/1.1\r\nBroken header\r\n\r\n", 400, "malformedRequest"),
            (
                "huge headers", "GET /v1/health HTTP/1.1\r\nX-Big: \(String(repeating: "a", count: 20_000))\r\n\r\n",
                431, "headersTooLarge"
            ),
            ("body over the limit", "POST /v1/save HTTP/1.1\r\nContent-Length: 5000\r\n\r\n", 413, "bodyTooLarge"),
            (
                "chunked body", "POST /v1/save HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 411,
                "lengthRequired"
            ),
            ("bad content length", "POST /v1/save HTTP/1.1\r\nContent-Length: ten\r\n\r\n", 400, "malformedRequest"),
            ("invalid JSON", Self.post("/v1/save", "[{\"op\":"), 400, "invalidJSON"),
            ("not a change list", Self.post("/v1/save", "42"), 400, "invalidRecord"),
            ("empty changes", Self.post("/v1/save", "[]"), 400, "invalidRecord"),
            (
                "unknown entity", Self.post("/v1/save", #"[{"op":"insert","entity":"Nope","record":{"id":1}}]"#), 404,
                "unknownEntity"
            ),
            (
                "unknown field",
                Self.post(
                    "/v1/save", #"[{"op":"insert","entity":"Counter","record":{"id":1,"value":1,"colour":"red"}}]"#),
                400, "invalidRecord"
            ),
            (
                "wrong kind",
                Self.post("/v1/save", #"[{"op":"insert","entity":"Counter","record":{"id":1,"value":"one"}}]"#), 400,
                "invalidRecord"
            ),
            (
                "wrong id kind", Self.post("/v1/save", #"[{"op":"delete","entity":"Counter","id":"one"}]"#), 400,
                "invalidRecord"
            ),
            (
                "unknown op", Self.post("/v1/save", #"[{"op":"upsert","entity":"Counter","record":{"id":1}}]"#), 400,
                "invalidRecord"
            ),
            (
                "update of a missing record",
                Self.post("/v1/save", #"[{"op":"update","entity":"Counter","record":{"id":12345,"value":1}}]"#), 400,
                "invalidRecord"
            ),
            (
                "second change bad: nothing written",
                Self.post(
                    "/v1/save",
                    #"[{"op":"insert","entity":"Counter","record":{"id":1,"value":5}},{"op":"insert","entity":"Counter","record":{"id":2,"value":true}}]"#
                ),
                400, "invalidRecord"
            ),
            ("bad query", "GET /v1/query?q=Counter%20where HTTP/1.1\r\n\r\n", 400, "badQuery"),
            ("query of an unknown entity", "GET /v1/query?q=Nope HTTP/1.1\r\n\r\n", 404, "unknownEntity"),
            ("subscription with a bad query", "GET /v1/subscribe?q=Counter%20sort HTTP/1.1\r\n\r\n", 400, "badQuery"),
            (
                "subscription past the head", "GET /v1/subscribe?q=Counter HTTP/1.1\r\nLast-Event-ID: 999999\r\n\r\n",
                400, "misuse"
            ),
            ("unknown path", "GET /v2/everything HTTP/1.1\r\n\r\n", 404, "notFound"),
            ("wrong method", "DELETE /v1/save HTTP/1.1\r\n\r\n", 405, "methodNotAllowed"),
        ]
        for (index, (name, request, status, code)) in cases.enumerated() {
            let client = try HTTPTestClient(unix: daemon.socket)
            client.send(Array(request.utf8))
            let response = client.response()
            #expect(response?.status == status, "\(name): \(response?.body ?? "no response")")
            let error = response?.json["error"] as? [String: Any]
            #expect(error?["code"] as? String == code, "\(name): \(response?.body ?? "")")
            #expect((error?["message"] as? String)?.isEmpty == false, "\(name)")
            // Meanwhile a well-behaved client saves, and the subscriber hears of it.
            let saved = good.request(
                "POST", "/v1/save",
                body:
                    #"[{"op":"insert","entity":"Counter","record":{"id":\#(500 + index),"value":\#(1000 + index),"payload":"ok"}}]"#
            )
            #expect(saved?.status == 200, "\(name): the good save")
        }
        // A truncated request, then the connection closes: nothing is written.
        let truncated = try HTTPTestClient(unix: daemon.socket)
        truncated.send(Array("POST /v1/save HTTP/1.1\r\nContent-Length: 100\r\n\r\n[{\"op\":".utf8))
        shutdown(truncated.fd, Int32(SHUT_WR))
        #expect(truncated.response() == nil)

        let head = try container.store.head()
        #expect(head == headBefore + UInt64(cases.count), "only the good saves were written")
        #expect(stream.wait { $0.last?.id == head }, "\(stream.received.map(\.id)) head \(head)\n\(daemon.logText)")
        let expected = try #require(good.request("GET", "/v1/query?q=Counter%20sort%20by%20value%20desc%20limit%205"))
        #expect(
            Self.replay(stream.received.map { ($0.name, $0.data) })
                == (expected.json["results"] as? [NSDictionary] ?? []))
        #expect(daemon.stop() == 0)
    }

    static func post(_ path: String, _ body: String) -> String {
        "POST \(path) HTTP/1.1\r\nContent-Length: \(body.utf8.count)\r\nContent-Type: application/json\r\n\r\n\(body)"
    }

    @Test func tcpNeedsTheBearerToken() throws {
        let (path, _) = try makeStore()
        let port = try freeTCPPort()

        let token = "s3cret-\(UUID())"
        let daemon = try DaemonProcess(
            store: path, arguments: ["--listen", ":\(port)", "--allow-origin", "http://app.example"],
            environment: ["RILL_TOKEN": token], log: directory.path("serve.log"))
        usleep(100_000)
        let anonymous = try HTTPTestClient(port: port).request("GET", "/v1/health")
        #expect(anonymous?.status == 401)
        #expect((anonymous?.json["error"] as? [String: Any])?["code"] as? String == "unauthorized")
        #expect(
            try HTTPTestClient(port: port).request("GET", "/v1/health", headers: ["Authorization: Bearer wrong"])?
                .status == 401
        )
        let allowed = try HTTPTestClient(port: port).request(
            "GET", "/v1/health", headers: ["Authorization: Bearer \(token)", "Origin: http://app.example"])
        #expect(allowed?.status == 200)
        let unauthorizedSave = try HTTPTestClient(port: port).request(
            "POST", "/v1/save", body: #"[{"op":"delete","entity":"Counter","id":1}]"#)
        #expect(unauthorizedSave?.status == 401)
        // A browser's EventSource cannot send headers: the token in the URL.
        let stream = EventStreamReader(try HTTPTestClient(port: port), query: "Counter limit 1", extraHeaders: [])
        #expect(stream.wait { _ in stream.status.withLock { $0 } != nil })
        #expect(stream.status.withLock { $0 } == 401)
        let eventSource = try HTTPTestClient(port: port)
        eventSource.send(
            Array(
                "GET /v1/subscribe?q=Counter%20limit%201&access_token=\(token) HTTP/1.1\r\nOrigin: http://app.example\r\n\r\n"
                    .utf8))
        #expect(eventSource.readMore())
        // The Unix socket needs no token (its file is 0600 in a 0700 directory).
        #expect(try HTTPTestClient(unix: daemon.socket).request("GET", "/v1/health")?.status == 200)
        var info = stat()
        stat(daemon.socket, &info)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(daemon.stop(SIGINT) == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.socket), "the socket file is removed on exit")
    }

    @Test func aSlowSubscriberIsResetWithoutStallingWriters() throws {
        let (path, _) = try makeStore()
        let daemon = try DaemonProcess(store: path, arguments: ["--queue", "8"], log: directory.path("serve.log"))
        // A subscriber that reads nothing for a while: its socket buffers fill, its queue overflows.
        let slow = try HTTPTestClient(unix: daemon.socket)
        var receive: Int32 = 4096
        setsockopt(slow.fd, SOL_SOCKET, SO_RCVBUF, &receive, socklen_t(MemoryLayout<Int32>.size))
        slow.send(Array("GET /v1/subscribe?q=Counter%20sort%20by%20value HTTP/1.1\r\n\r\n".utf8))
        let writer = try HTTPTestClient(unix: daemon.socket)
        let payload = String(repeating: "x", count: 2000)
        let started = Date()
        for round in 0..<300 {
            let response = writer.request(
                "POST", "/v1/save",
                body:
                    #"[{"op":"insert","entity":"Counter","record":{"id":\#(round % 40),"value":\#(round),"payload":"\#(payload)"}}]"#
            )
            #expect(response?.status == 200)
        }
        let writing = Date().timeIntervalSince(started)
        #expect(writing < 60, "writers were not held up by the slow subscriber (\(writing) s)")
        let head = try #require((writer.request("GET", "/v1/health")?.json["seq"] as? NSNumber)?.uint64Value)
        // Now it reads: a reset with a fresh snapshot, then changes, up to the last commit.
        let reader = EventStreamReader(slow, query: nil)
        #expect(reader.wait { $0.last?.id == head })
        #expect(reader.received.contains { $0.name == "reset" })
        let expected = try #require(writer.request("GET", "/v1/query?q=Counter%20sort%20by%20value"))
        #expect(
            Self.replay(reader.received.map { ($0.name, $0.data) })
                == (expected.json["results"] as? [NSDictionary] ?? []))
        #expect(daemon.stop() == 0)
        #expect(daemon.logText.contains("reset"))
    }

    @Test func resumingFromTooFarBackIsAReset() throws {
        let (path, container) = try makeStore()
        let daemon = try DaemonProcess(
            store: path, arguments: ["--resume-limit", "5"], log: directory.path("serve.log"))
        for value in 0..<10 {
            container.mainContext.insert(Counter(id: 1, value: 100 + value))
            try container.mainContext.save()
        }
        let head = try container.store.head()
        let near = EventStreamReader(
            try HTTPTestClient(unix: daemon.socket), query: "Counter sort by value desc limit 3", lastEventID: head - 3)
        let far = EventStreamReader(
            try HTTPTestClient(unix: daemon.socket), query: "Counter sort by value desc limit 3", lastEventID: 1)
        #expect(near.wait { $0.count == 3 })
        #expect(near.received.map(\.name) == ["change", "change", "change"])
        #expect(far.wait { !$0.isEmpty })
        #expect(far.received.first?.name == "reset" && far.received.first?.id == head)
        #expect(daemon.stop() == 0)
    }

    @Test func connectionsPastTheLimitAreTurnedAway() throws {
        let (path, _) = try makeStore()
        let daemon = try DaemonProcess(
            store: path, arguments: ["--max-connections", "3"], log: directory.path("serve.log"))
        let held = try (0..<3).map { _ in try HTTPTestClient(unix: daemon.socket) }
        #expect(held[0].request("GET", "/v1/health")?.status == 200)
        let extra = try HTTPTestClient(unix: daemon.socket)
        let refused = extra.response()
        #expect(refused?.status == 503)
        #expect((refused?.json["error"] as? [String: Any])?["code"] as? String == "tooManyConnections")
        // One leaves: room for another.
        shutdown(held[2].fd, Int32(SHUT_RDWR))
        var admitted: HTTPTestResponse?
        for _ in 0..<50 where admitted?.status != 200 {
            usleep(20_000)
            admitted = try HTTPTestClient(unix: daemon.socket).request("GET", "/v1/health")
        }
        #expect(admitted?.status == 200)
        #expect(daemon.stop() == 0)
    }

    @Test func aLiveDaemonIsRefusedAStaleSocketReplaced() throws {
        let (path, _) = try makeStore()
        let first = try DaemonProcess(store: path, log: directory.path("first.log"))
        let second = try DaemonProcess(store: path, log: directory.path("second.log"))
        second.process.waitUntilExit()
        #expect(second.process.terminationStatus == 1)
        #expect(second.logText.contains("another process is serving"), "\(second.logText)")
        #expect(
            try HTTPTestClient(unix: first.socket).request("GET", "/v1/health")?.status == 200,
            "the first one serves on")
        // Killed outright, the first leaves its socket file behind; the next daemon replaces it.
        #expect(first.stop(SIGKILL) != 0)
        #expect(FileManager.default.fileExists(atPath: first.socket))
        let third = try DaemonProcess(store: path, log: directory.path("third.log"))
        #expect(try HTTPTestClient(unix: third.socket).request("GET", "/v1/health")?.status == 200)
        #expect(third.stop(SIGINT) == 0)
    }

    @Test func sigtermDuringLoadKeepsEveryAcknowledgedSave() throws {
        let (path, container) = try makeStore()
        let daemon = try DaemonProcess(store: path, log: directory.path("serve.log"))
        let acknowledged = Lock<[(id: Int, seq: UInt64)]>([])
        let writers = (0..<4).map { writer in
            Thread {
                guard let client = try? HTTPTestClient(unix: daemon.socket) else { return }
                for round in 0..<100_000 {
                    let id = 10_000 + writer * 100_000 + round
                    guard
                        let response = client.request(
                            "POST", "/v1/save",
                            body:
                                #"[{"op":"insert","entity":"Counter","record":{"id":\#(id),"value":\#(round),"payload":""}}]"#
                        ),
                        response.status == 200, let seq = (response.json["seq"] as? NSNumber)?.uint64Value
                    else { return }
                    acknowledged.withLock { $0.append((id, seq)) }
                }
            }
        }
        for thread in writers { thread.start() }
        usleep(700_000)
        #expect(daemon.stop(SIGTERM) == 0, "SIGTERM ends the daemon with status 0")
        usleep(200_000)
        let saves = acknowledged.withLock { $0 }
        #expect(saves.count > 10, "saves were under way when SIGTERM came")
        // Every acknowledged save is in the store, at its sequence.
        let context = ModelContext(container)
        let entries = try container.store.entries(after: 0)
        var bySequence: [UInt64: LogEntry] = [:]
        for entry in entries { bySequence[entry.sequence] = entry }
        for save in saves {
            #expect(try context.model(Counter.self, id: save.id) != nil, "acknowledged save of \(save.id) is missing")
            #expect(bySequence[save.seq]?.changes.first?.key == save.id.storageKey)
        }
        #expect(entries.map(\.sequence) == Array(1...UInt64(entries.count)), "the log is gapless")
        #expect(!FileManager.default.fileExists(atPath: daemon.socket))
    }
}
