import Foundation
import RillTestSupport
import RillWorkloads
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `GET /metrics`: Prometheus's text format, checked by a parser of the test's own, with
/// counters that move as the test's saves, requests and subscriptions happen.
@Suite struct ServeMetricsTests {
    let directory = TemporaryDirectory()

    static func scrape(_ socket: String) throws -> PrometheusExposition {
        let client = try ServeLoggingTests.client(socket)
        let response = try #require(client.request("GET", "/metrics"))
        #expect(response.status == 200, "\(response.body)")
        #expect(response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
        return try PrometheusExposition(parsing: response.body)
    }

    /// Waits (30 s at most) until a scrape satisfies `condition`; the last scrape.
    static func scrape(
        _ socket: String, until condition: (PrometheusExposition) -> Bool
    ) throws -> PrometheusExposition {
        let deadline = Date().addingTimeInterval(30)
        var last = try scrape(socket)
        while !condition(last), Date() < deadline {
            usleep(20_000)
            last = try scrape(socket)
        }
        return last
    }

    @Test func countersFollowTheSavesMade() throws {
        let seed = UInt64.random(in: 0...UInt64(UInt32.max))
        print("ServeMetricsTests.countersFollowTheSavesMade seed \(seed)")
        var random = SeededGenerator(seed: seed)
        let path = try directory.counterStore(records: 3)
        let daemon = try DaemonProcess(store: path, log: directory.path("serve.log"))
        let before = try Self.scrape(daemon.socket)
        #expect(before.value("rill_saves_total") == 0)
        #expect(before.value("rill_commits_total") == 0)
        #expect(before.value("rill_log_head") == 1, "the store was made by one save")
        for name in ["rill_save_duration_seconds", "rill_commit_records"] {
            #expect(before.families[name]?.type == "histogram", "\(name)")
        }

        // The oracle: the saves this test makes, and the records each commits.
        let saves = Int.random(in: 3...12, using: &random)
        var committed: [Int] = []
        var noOps = 0
        var nextID = 1000
        let writer = try ServeLoggingTests.client(daemon.socket)
        for _ in 0..<saves {
            if Int.random(in: 0..<4, using: &random) == 0 {
                // A delete of no record: a save that makes no commit.
                let response = writer.request(
                    "POST", "/v1/save", body: #"[{"op":"delete","entity":"Counter","id":999999}]"#)
                #expect(response?.status == 200)
                #expect(response?.body.contains(#""seq":null"#) == true)
                noOps += 1
                continue
            }
            let count = Int.random(in: 1...30, using: &random)
            let changes = (0..<count).map { offset in
                #"{"op":"insert","entity":"Counter","record":{"id":\#(nextID + offset),"value":1,"payload":""}}"#
            }
            nextID += count
            let response = writer.request("POST", "/v1/save", body: "[" + changes.joined(separator: ",") + "]")
            #expect(response?.status == 200, "\(response?.body ?? "")")
            committed.append(count)
        }
        // One refused request of each of two kinds.
        #expect(writer.request("GET", "/v1/nowhere")?.status == 404)
        #expect(writer.request("POST", "/v1/save", body: "not json")?.status == 400)

        let after = try Self.scrape(daemon.socket)
        #expect(after.value("rill_saves_total") == Double(saves), "saves made: \(saves)")
        #expect(after.value("rill_commits_total") == Double(committed.count), "commits made: \(committed)")
        #expect(after.value("rill_save_duration_seconds_count") == Double(saves))
        #expect((after.value("rill_save_duration_seconds_sum") ?? 0) > 0)
        #expect(after.value("rill_commit_records_count") == Double(committed.count))
        #expect(after.value("rill_commit_records_sum") == Double(committed.reduce(0, +)))
        // Each bucket holds the commits of at most its bound of records.
        for bucket in after.buckets("rill_commit_records") {
            let expected = committed.filter { Double($0) <= bucket.bound }.count
            #expect(bucket.count == Double(expected), "bucket le=\(bucket.bound); commits \(committed)")
        }
        #expect(after.value("rill_log_head") == Double(1 + committed.count))
        // Saves one at a time are never grouped: each commit is a write transaction of its own,
        // and a save that commits nothing makes at most one.
        let transactions =
            (after.value("rill_write_transactions_total") ?? 0)
            - (before.value("rill_write_transactions_total") ?? 0)
        #expect(
            transactions >= Double(committed.count) && transactions <= Double(saves),
            "write transactions: \(transactions); commits \(committed.count) of \(saves) saves")
        #expect(after.value("rill_requests_rejected_total", ["status": "404", "reason": "notFound"]) == 1)
        #expect(after.value("rill_requests_rejected_total", ["status": "400", "reason": "invalidJSON"]) == 1)
        // The saves, the two refusals and the first scrape (this one is counted once answered).
        #expect(after.value("rill_requests_total") == Double(saves + 3))
        // The probe that saw the daemon up (`DaemonProcess`), the first scrape's connection, the
        // writer's and this scrape's.
        #expect(after.value("rill_connections_accepted_total", ["listener": "unix"]) == 4)
        #expect(after.value("rill_connections_accepted_total", ["listener": "tcp"]) == 0)
        #expect((after.value("rill_connections_open") ?? 0) >= 2)
        #expect(after.value("rill_follower_lag_commits") == 0)
        #expect(daemon.stop() == 0)
    }

    @Test func gaugesShowSubscribersLiveQueriesAndLag() throws {
        let path = try directory.counterStore(records: 3)
        let daemon = try DaemonProcess(store: path, log: directory.path("serve.log"))
        let idle = try Self.scrape(daemon.socket)
        #expect(idle.value("rill_subscribers") == 0)
        #expect(idle.value("rill_live_queries") == 0)
        #expect(idle.value("rill_follower_lag_commits") == 0)
        #expect(idle.value("rill_follower_lag_milliseconds") == 0)

        // Two queries, one of them subscribed to twice: the two share its results.
        let streams = [0, 1, 0].map { value in
            EventStreamReader(try! ServeLoggingTests.client(daemon.socket), query: "Counter where value >= \(value)")
        }
        for stream in streams { #expect(stream.wait { !$0.isEmpty }) }
        let open = try Self.scrape(daemon.socket) { $0.value("rill_subscribers") == 3 }
        #expect(open.value("rill_subscribers") == 3)
        #expect(open.value("rill_live_queries") == 2, "subscriptions to one query count once")

        let writer = try ServeLoggingTests.client(daemon.socket)
        for id in 0..<5 {
            let change = #"{"op":"insert","entity":"Counter","record":{"id":\#(500 + id),"value":1,"payload":""}}"#
            #expect(writer.request("POST", "/v1/save", body: "[" + change + "]")?.status == 200)
        }
        // The follower catches up: no lag once the subscribers had the changes.
        for stream in streams { #expect(stream.wait { $0.contains { $0.id == 6 } }) }
        let caughtUp = try Self.scrape(daemon.socket) { $0.value("rill_follower_lag_commits") == 0 }
        #expect(caughtUp.value("rill_follower_lag_commits") == 0)
        #expect(caughtUp.value("rill_follower_lag_milliseconds") == 0)
        #expect(caughtUp.value("rill_log_head") == 6)

        for stream in streams { shutdown(stream.client.fd, Int32(SHUT_RDWR)) }
        let closed = try Self.scrape(daemon.socket) {
            $0.value("rill_subscribers") == 0 && $0.value("rill_live_queries") == 0
        }
        #expect(closed.value("rill_subscribers") == 0)
        #expect(closed.value("rill_live_queries") == 0, "the subscriptions' live queries went with them")
        #expect(daemon.stop() == 0)
    }

    @Test func metricsOverTCPNeedTheToken() throws {
        let path = try directory.counterStore(records: 1)
        let port = try freeTCPPort()
        let daemon = try DaemonProcess(
            store: path, arguments: ["--listen", "127.0.0.1:\(port)"], environment: ["RILL_TOKEN": "s3cret"],
            log: directory.path("serve.log"))
        let anonymous = try HTTPTestClient(port: port)
        #expect(anonymous.request("GET", "/metrics")?.status == 401)
        let wrong = try HTTPTestClient(port: port)
        #expect(wrong.request("GET", "/metrics", headers: ["Authorization: Bearer nope"])?.status == 401)
        let authorized = try HTTPTestClient(port: port)
        let response = try #require(authorized.request("GET", "/metrics", headers: ["Authorization: Bearer s3cret"]))
        #expect(response.status == 200)
        let exposition = try PrometheusExposition(parsing: response.body)
        #expect(exposition.value("rill_requests_rejected_total", ["status": "401", "reason": "unauthorized"]) == 2)
        #expect(exposition.value("rill_connections_accepted_total", ["listener": "tcp"]) == 3)
        #expect(try Self.scrape(daemon.socket).value("rill_requests_total") == 3)
        #expect(daemon.stop() == 0)
    }
}
