import Foundation
import RillTestSupport
import Testing

@testable import Rill

/// The daemon's saves follow the unique indexes of the store's catalog: an insert of a taken value
/// updates the record that has it, or, with `fail`, is answered 409 `uniqueConflict` and writes nothing.
@Suite struct ServeUniqueTests {
    let directory = TemporaryDirectory()

    struct StrictAccount: PersistentModel, Equatable {
        var id: Int
        var email: String
        var name: String
        static let indexes: [ModelIndex<StrictAccount>] = [.unique(\.email, onConflict: .fail)]
    }

    @Test func aSaveOfATakenValueUpsertsOrIsAConflict() throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Account.self, StrictAccount.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        container.mainContext.insert(Account(id: 1, email: "ada@example.com", name: "Ada"))
        container.mainContext.insert(StrictAccount(id: 1, email: "ada@example.com", name: "Ada"))
        try container.mainContext.save()
        let daemon = try DaemonProcess(store: path, log: directory.path("serve.log"))
        let client = try HTTPTestClient(unix: daemon.socket)

        let upsert = try #require(
            client.request(
                "POST", "/v1/save",
                body:
                    #"[{"op":"insert","entity":"Account","record":{"id":5,"email":"ada@example.com","name":"Ada L"}}]"#)
        )
        #expect(upsert.status == 200 && upsert.body.contains(#""seq":2"#), "\(upsert.body)")
        #expect(try container.mainContext.fetch(FetchDescriptor<Account>()).map(\.id) == [1])

        let refused = try #require(
            client.request(
                "POST", "/v1/save",
                body:
                    #"[{"op":"insert","entity":"StrictAccount","record":{"id":5,"email":"ada@example.com","name":"X"}}]"#
            ))
        #expect(refused.status == 409, "\(refused.body)")
        #expect(refused.body.contains(#""code":"uniqueConflict""#), "\(refused.body)")
        #expect(refused.body.contains("StrictAccount 1 already has email"), "\(refused.body)")
        #expect(try container.store.head() == 2)
        let schema = try #require(client.request("GET", "/v1/schema?entity=StrictAccount"))
        #expect(schema.body.contains(#""unique":{"email":"fail"}"#), "\(schema.body)")
    }
}
