import Foundation
import RillTestSupport
import Testing

@testable import Rill

/// Shelves and the books on them: a to-one reference and its inverse.
private struct Shelf: PersistentModel {
    var id: String
    var books = Related<Volume>()

    static let relationships: [ModelRelationship<Shelf>] = [.inverse(\.books, of: \Volume.shelf)]
}

private struct Volume: PersistentModel {
    var id: String
    var title: String
    var shelf: Reference<Shelf>?

    static let relationships: [ModelRelationship<Volume>] = [.reference(\.shelf)]
}

/// The daemon's queries and subscriptions through relationships: a subscription changes when only
/// a related record does, and one resuming after a commit is sent a reset.
@Suite struct ServeRelationshipTests {
    let directory = TemporaryDirectory()

    @Test func subscriptionsFollowRelatedRecords() throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: [Shelf.self, Volume.self], configurations: [ModelConfiguration(url: URL(fileURLWithPath: path))])
        let context = container.mainContext
        for name in ["a", "b"] { context.insert(Shelf(id: name)) }
        context.insert(Volume(id: "v1", title: "Dune", shelf: Reference("a")))
        context.insert(Volume(id: "v2", title: "Emma", shelf: Reference("b")))
        try context.save()
        let daemon = try DaemonProcess(store: path, log: directory.path("serve.log"))
        let writer = try HTTPTestClient(unix: daemon.socket)
        let query = "Shelf%20where%20any%20books.title%20contains%20%22Dune%22"
        func save(_ id: String, _ title: String, _ shelf: String) throws -> UInt64 {
            let body =
                #"[{"op":"insert","entity":"Volume","record":{"id":"\#(id)","title":"\#(title)","shelf":"\#(shelf)"}}]"#
            let response = try #require(writer.request("POST", "/v1/save", body: body))
            return try #require((response.json["seq"] as? NSNumber)?.uint64Value, "\(response.body)")
        }
        func current() throws -> [NSDictionary] {
            try #require(writer.request("GET", "/v1/query?q=\(query)")).json["results"] as? [NSDictionary] ?? []
        }
        #expect(try current().compactMap { $0["id"] as? String } == ["a"])

        let client = try HTTPTestClient(unix: daemon.socket)
        client.send(Array("GET /v1/subscribe?q=\(query)&progress=0 HTTP/1.1\r\nHost: rill\r\n\r\n".utf8))
        let reader = EventStreamReader(client, query: nil)
        #expect(reader.wait { !$0.isEmpty })
        // Only the volumes change; the shelves' results do.
        let renamed = try save("v1", "Dune Messiah", "b")
        #expect(reader.wait { $0.last?.id == renamed }, "\(reader.received)")
        let moved = try save("v2", "Dune", "a")
        #expect(reader.wait { $0.last?.id == moved }, "\(reader.received)")
        let final = try current()
        #expect(final.compactMap { $0["id"] as? String } == ["a", "b"])
        #expect(ServeTests.replay(reader.received.map { ($0.name, $0.data) }) == final)

        // Resuming after a commit: a reset with the current results, then live.
        let resumed = EventStreamReader(
            try HTTPTestClient(unix: daemon.socket), query: "Shelf where any books.title contains \"Dune\"",
            lastEventID: renamed)
        #expect(resumed.wait { !$0.isEmpty })
        #expect(resumed.received.first?.name == "reset", "\(resumed.received)")
        #expect(ServeTests.replay(resumed.received.map { ($0.name, $0.data) }) == final)

        let bad = try #require(writer.request("GET", "/v1/query?q=Volume%20where%20shelf.nme%20%3D%3D%20%22a%22"))
        #expect(bad.status == 400 && bad.body.contains("Shelf (through Volume.shelf) has no field"), "\(bad.body)")
        #expect(daemon.stop() == 0)
    }
}
