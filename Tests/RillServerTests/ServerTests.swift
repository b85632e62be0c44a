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
}
