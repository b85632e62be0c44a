import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// The daemon on a store migrated from `TaskV1` to `TaskV2`, with a version-1 writer still saving:
/// `/v1/query` answers what the typed fetch finds, and `/v1/subscribe` streams the older
/// writer's records as version 2 reads them (a renamed field under its new name, an added one
/// with its default).
@Suite struct ServeEvolutionTests {
    let directory = TemporaryDirectory()

    @Test func queriesAndSubscriptionsSeeRecordsOfTheOlderWriterAsVersionTwo() throws {
        var random = SeededGenerator(label: "serve evolution")
        let path = directory.path("store")
        let configuration = ModelConfiguration(url: URL(fileURLWithPath: path))
        let writer = try ModelContainer(for: TaskV1.self, configurations: configuration)
        func save(_ id: String, title: String) throws {
            writer.mainContext.insert(
                TaskV1(
                    id: id, title: title, priority: ["low", "high"].randomElement(using: &random)!,
                    done: Bool.random(using: &random)))
            try writer.mainContext.save()
        }
        for number in 0..<20 { try save("t\(number)", title: "w\(Int.random(in: 0..<3, using: &random))") }
        let container = try ModelContainer(for: TaskV2.self, configurations: configuration)
        for number in 20..<26 { try save("t\(number)", title: "w\(Int.random(in: 0..<3, using: &random))") }

        let daemon = try DaemonProcess(store: path, log: directory.path("serve.log"))
        let client = try HTTPTestClient(unix: daemon.socket)
        let query = "Task where name == \"w1\" and rank == 3 sort by id"
        let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let typed = FetchDescriptor<TaskV2>(
            predicate: #Predicate { $0.name == "w1" && $0.rank == 3 }, sortBy: [SortDescriptor(\.id)])
        let response = try #require(client.request("GET", "/v1/query?q=" + encoded))
        #expect(response.status == 200, "\(response.body)")
        let results = try #require(response.json["results"] as? [[String: Any]])
        #expect(results.map { $0["id"] as? String } == (try container.mainContext.fetch(typed).map(\.id)))

        let subscriber = try HTTPTestClient(unix: daemon.socket)
        let reader = EventStreamReader(subscriber, query: query)
        #expect(reader.wait { $0.contains { $0.name == "results" } })
        try save("new", title: "w1")
        let head = try writer.lastSequence()
        #expect(reader.wait { $0.contains { $0.id == head } }, "\(reader.received)")
        let change = try #require(reader.received.last { $0.name == "change" })
        #expect(change.data.contains(#""id":"new""#) && change.data.contains(#""name":"w1""#), "\(change.data)")
        #expect(change.data.contains(#""rank":3"#), "\(change.data)")
        #expect(!reader.received.contains { $0.name == "error" })
    }
}
