import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// The daemon with a compacted log and durable subscriptions: `?subscription=` registers a
/// subscriber and moves it with what it is sent, so `rill compact` never passes it; a
/// subscriber resuming from before the horizon is sent a reset; a Last-Event-ID of any size is
/// answered, never a crash.
@Suite struct ServeCompactionTests {
    let directory = TemporaryDirectory()

    func save(_ client: HTTPTestClient, id: Int, value: Int) -> UInt64? {
        let body = #"[{"op":"insert","entity":"Counter","record":{"id":\#(id),"value":\#(value),"payload":""}}]"#
        return (client.request("POST", "/v1/save", body: body)?.json["seq"] as? NSNumber)?.uint64Value
    }

    @Test func durableSubscriptionsHoldCompactionBackAndOldIDsAreReset() throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        for id in 0..<10 { container.mainContext.insert(Counter(id: id, value: id)) }
        try container.mainContext.save()
        let daemon = try DaemonProcess(store: path, log: directory.path("serve.log"))
        let writer = try HTTPTestClient(unix: daemon.socket)

        // A durable subscriber, from the start.
        let client = try HTTPTestClient(unix: daemon.socket)
        client.send(
            Array(
                "GET /v1/subscribe?q=Counter%20where%20value%20%3E%3D%205&subscription=mirror&progress=0 HTTP/1.1\r\nHost: rill\r\n\r\n"
                    .utf8))
        let reader = EventStreamReader(client, query: nil)
        #expect(reader.wait { !$0.isEmpty })
        var last: UInt64 = 1
        for round in 0..<20 { last = try #require(save(writer, id: round % 12, value: 5 + round)) }
        #expect(reader.wait { $0.last?.id == last })
        // The position is written at most once a second: wait for it to reach the last commit sent.
        var position: UInt64 = 0
        for _ in 0..<40 {
            let listed = writer.request("GET", "/v1/subscriptions")?.json["subscriptions"] as? [[String: Any]]
            position = (listed?.first { $0["name"] as? String == "mirror" }?["seq"] as? NSNumber)?.uint64Value ?? 0
            if position == last { break }
            _ = save(writer, id: 99, value: 0)  // (another entity's value: does not change the results)
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(position >= 1 && position <= last + 40, "registered at \(position)")
        // Commits the subscriber is not sent (nothing changes for it, and it asked for no progress
        // events): the registered position stays behind them.
        _ = save(writer, id: 98, value: 0)
        _ = save(writer, id: 97, value: 0)
        let head = try container.store.head()
        #expect(head >= position + 2)

        // Compaction stops at the subscription, through the CLI as in the library.
        let refused = try runBuilt("rill", ["compact", path, "--before", "\(head)"])
        #expect(refused.status == 1 && refused.error.contains("\"mirror\""), "\(refused.error)")
        #expect(writer.request("DELETE", "/v1/subscriptions/mirror")?.status == 200)
        #expect(writer.request("DELETE", "/v1/subscriptions/mirror")?.status == 404)
        let compacted = try runBuilt("rill", ["compact", path, "--before", "\(head)"])
        #expect(compacted.status == 0, "\(compacted.error)")
        #expect(compacted.output.contains("the horizon is commit \(head - 1)"), "\(compacted.output)")
        #expect(compacted.output.contains("not shrunk: another process has the store open"), "\(compacted.output)")

        // Resuming from before the horizon: a reset with the current results, then live.
        let old = EventStreamReader(try HTTPTestClient(unix: daemon.socket), query: "Counter", lastEventID: 3)
        #expect(old.wait { !$0.isEmpty })
        #expect(old.received.first?.name == "reset", "\(old.received)")
        let current = try #require(writer.request("GET", "/v1/query?q=Counter"))
        #expect(
            ServeTests.replay(old.received.map { ($0.name, $0.data) })
                == (current.json["results"] as? [NSDictionary] ?? []))
        // From the horizon itself, nothing is missed: changes only.
        let fromHorizon = EventStreamReader(
            try HTTPTestClient(unix: daemon.socket), query: "Counter", lastEventID: head - 1)
        let next = try #require(save(writer, id: 3, value: 1_000))
        #expect(fromHorizon.wait { $0.last?.id == next })
        #expect(fromHorizon.received.allSatisfy { $0.name == "change" }, "\(fromHorizon.received.map(\.name))")

        // An id beyond any commit, up to the largest number, is an error, not a crash.
        for id in [UInt64.max, UInt64.max - 3, next + 1] {
            let response = try #require(
                try HTTPTestClient(unix: daemon.socket).request(
                    "GET", "/v1/subscribe?q=Counter", headers: ["Last-Event-ID: \(id)"]))
            #expect(response.status == 400 && response.body.contains("misuse"), "\(id): \(response.body)")
        }
        #expect(writer.request("GET", "/v1/health")?.status == 200)
        let badName = try HTTPTestClient(unix: daemon.socket).request(
            "GET", "/v1/subscribe?q=Counter&subscription=" + String(repeating: "n", count: 201))
        #expect(badName?.status == 400 && badName?.body.contains("badParameter") == true)
    }
}
