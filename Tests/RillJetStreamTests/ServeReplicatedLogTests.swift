import Foundation
import Rill
import RillJetStream
import RillTestSupport
import Testing

/// `rill serve --log nats://…`: daemons whose stores are nodes of one replicated log.
@Suite(.enabled(if: NATSServer.executable != nil, "nats-server is not installed"))
struct ServeReplicatedLogTests {
    let directory = TemporaryDirectory()

    /// The ids of the counters the daemon's query answers with.
    static func ids(_ client: HTTPTestClient) -> [Int]? {
        guard let response = client.request("GET", "/v1/query?q=Counter%20sort%20by%20id"), response.status == 200
        else { return nil }
        // {"seq":n,"results":[{"id":1,…},…]}
        return response.body.components(separatedBy: #"{"id":"#).dropFirst().compactMap {
            Int($0.prefix { $0.isNumber })
        }
    }

    @Test func aSaveToOneDaemonIsServedByAnother() throws {
        let server = try NATSServer()
        let url = "nats://127.0.0.1:\(server.port)/counters?replicas=1"
        // Node a: a store an app created, with its models, on the log.
        do {
            let container = try ModelContainer(
                for: Counter.self,
                configurations: ModelConfiguration(
                    url: URL(fileURLWithPath: directory.path("a")), log: try .jetStream(url)))
            try server.whenReady {
                container.mainContext.insert(Counter(id: 1, value: 1))
                try container.mainContext.save()
            }
        }
        let a = try DaemonProcess(store: directory.path("a"), arguments: ["--log", url], log: directory.path("a.log"))
        // Node b: nothing but the log; its store is created and filled from it.
        let b = try DaemonProcess(store: directory.path("b"), arguments: ["--log", url], log: directory.path("b.log"))
        let clientA = try HTTPTestClient(unix: a.socket)
        let clientB = try HTTPTestClient(unix: b.socket)

        let save = try #require(
            clientA.request(
                "POST", "/v1/save",
                body: #"[{"op":"insert","entity":"Counter","record":{"id":2,"value":2,"payload":""}}]"#))
        #expect(save.status == 200 && save.body.contains(#""seq":2"#), "\(save.body)")
        let deadline = Date().addingTimeInterval(20)
        while Self.ids(clientB) != [1, 2], Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(Self.ids(clientB) == [1, 2], "\(b.logText)")
        #expect(Self.ids(clientA) == [1, 2], "\(a.logText)")
        #expect(b.logs("following nats://127.0.0.1:\(server.port)/counters"), "\(b.logText)")
        #expect(a.stop() == 0)
        #expect(b.stop() == 0)

        // A node whose log does not answer serves its store, and answers saves 503.
        let port = try NATSServer.unusedPort()
        let cut = try DaemonProcess(
            store: directory.path("b"), arguments: ["--log", "nats://127.0.0.1:\(port)/counters?timeout=0.5"],
            log: directory.path("cut.log"))
        let clientCut = try HTTPTestClient(unix: cut.socket)
        #expect(Self.ids(clientCut) == [1, 2], "\(cut.logText)")
        let refused = try #require(
            clientCut.request(
                "POST", "/v1/save",
                body: #"[{"op":"insert","entity":"Counter","record":{"id":3,"value":3,"payload":""}}]"#))
        #expect(refused.status == 503 && refused.body.contains(#""code":"replicationUnavailable""#), "\(refused.body)")
        #expect(Self.ids(clientCut) == [1, 2])
        #expect(cut.logs("does not answer"), "\(cut.logText)")
        #expect(cut.stop() == 0)
    }

    @Test func aBadLogAddressIsAUsageError() throws {
        let run = try runBuilt("rill", ["serve", directory.path("x"), "--log", "nats://n1:4222"])
        #expect(run.status == 64, "\(run.error)")
        #expect(run.error.contains("--log: 'nats://n1:4222' names no stream"), "\(run.error)")
        #expect(!FileManager.default.fileExists(atPath: directory.path("x")))
    }
}
