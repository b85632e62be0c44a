import Foundation
import RillTestSupport
import Testing

@testable import Rill
@testable import RillServer

/// The daemon as a library, in the test's own process: started on a store, asked over its Unix
/// socket, stopped.
@Suite struct ServerTests {
    let directory = TemporaryDirectory()

    /// A server on a store of three `Counter`s, started; the container keeps the store open.
    func started() throws -> (Server, ModelContainer, socket: String) {
        let path = try directory.counterStore(records: 3)
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let socket = directory.path("rill.sock")
        let server = try Server(store: container.store, options: ServerOptions(socketPath: socket))
        server.start()
        return (server, container, socket)
    }

    @Test func savesQueriesAndErrorsAnswerAsTheProtocolSays() throws {
        let (server, container, socket) = try started()
        let client = try HTTPTestClient(unix: socket)
        let head = try container.store.head()

        let health = try #require(client.request("GET", "/v1/health"))
        #expect(health.status == 200)
        #expect(health.body == #"{"status":"ok","seq":\#(head)}"# + "\n")

        let save = try #require(
            client.request(
                "POST", "/v1/save",
                body:
                    #"{"author":"test","changes":[{"op":"insert","entity":"Counter","record":{"id":9,"value":9,"payload":""}}]}"#
            ))
        #expect(save.status == 200)
        #expect(save.body == #"{"seq":\#(head + 1)}"# + "\n")

        let query = try #require(client.request("GET", "/v1/query?q=Counter%20where%20value%20%3E%201"))
        #expect(query.status == 200)
        #expect((query.json["results"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } == [2, 9])

        let refused = try #require(client.request("POST", "/v1/save", body: "[]"))
        #expect(refused.status == 400)
        #expect(refused.body == #"{"error":{"code":"invalidRecord","message":"no changes"}}"# + "\n")

        let missing = try #require(client.request("GET", "/v1/query?q=Nope"))
        #expect(missing.status == 404)
        #expect((missing.json["error"] as? [String: Any])?["code"] as? String == "unknownEntity")

        server.stop()
        server.waitUntilStopped()
        #expect(!FileManager.default.fileExists(atPath: socket), "the socket file goes with the server")
    }

    /// A compaction that folds commits the daemon's follower has not read yet (`rill compact`
    /// right after a save): each subscriber is sent the change from the results it had to those
    /// at the log's head, and the changes of later saves, rather than an error or nothing.
    @Test func subscribersAreResetWhenCommitsTheyHadNotReadAreCompactedAway() throws {
        let (server, container, socket) = try started()
        defer {
            server.stop()
            server.waitUntilStopped()
        }
        let context = ModelContext(container)
        let reader = EventStreamReader(try HTTPTestClient(unix: socket), query: "Counter where value >= 1")
        #expect(reader.wait { $0.first?.name == "results" })
        // Two commits saved and folded while the follower is held.
        let follower = try #require(LogFollowers.running(for: container.store.fileID))
        try follower.holding {
            context.insert(Counter(id: 7, value: 70))
            try context.save()
            context.insert(Counter(id: 1, value: 0))
            try context.save()
            _ = try container.store.compact(before: try container.store.head())
        }

        let head = try container.store.head()
        #expect(reader.wait { $0.last?.id == head }, "\(reader.received.map { ($0.name, $0.id) })")
        context.insert(Counter(id: 8, value: 80))
        let last = try #require(try context.save())
        #expect(reader.wait { $0.last?.id == last }, "\(reader.received.map { ($0.name, $0.id) })")
        #expect(!reader.received.contains { $0.name == "error" }, "\(reader.received)")
        let current = try #require(
            try HTTPTestClient(unix: socket).request("GET", "/v1/query?q=Counter%20where%20value%20%3E%3D%201"))
        #expect(
            ServeTests.replay(reader.received.map { ($0.name, $0.data) })
                == (current.json["results"] as? [NSDictionary] ?? []))
    }
}
