import Foundation
import RillTestSupport
import Testing

@testable import Rill

/// Unique indexes through JSON writes (`rill insert`, `rill update`, `rill import`), `rill schema`
/// and `rill export`: the same rule as a model type's saves, from the catalog.
@Suite struct UniqueWriteCommandTests {
    let directory = TemporaryDirectory()

    struct StrictAccount: PersistentModel, Equatable {
        var id: Int
        var email: String
        var name: String
        static let indexes: [ModelIndex<StrictAccount>] = [.unique(\.email, onConflict: .fail)]
    }

    func rill(_ arguments: [String], input: String? = nil) throws -> ProcessRun {
        try runBuilt("rill", arguments, input: input)
    }

    @Test func aJSONInsertOfATakenValueUpdatesTheRecordOrFails() throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Account.self, StrictAccount.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = container.mainContext
        context.insert(Account(id: 1, email: "ada@example.com", name: "Ada"))
        context.insert(Account(id: 2, email: "bob@example.com", name: "Bob"))
        context.insert(StrictAccount(id: 1, email: "ada@example.com", name: "Ada"))
        try context.save()

        let upsert = try rill(["insert", path, "Account", #"{"id":9,"email":"ada@example.com","name":"Ada L"}"#])
        #expect(upsert.status == 0 && upsert.output == #"{"seq":2}"# + "\n", "\(upsert.error)")
        #expect(
            try context.fetch(FetchDescriptor<Account>(sortBy: [SortDescriptor(\.id)]))
                == [
                    Account(id: 1, email: "ada@example.com", name: "Ada L"),
                    Account(id: 2, email: "bob@example.com", name: "Bob"),
                ])
        let change = try #require(try container.store.entries(after: 1).first?.changes.first)
        #expect(change.kind == .update && change.key == 1.storageKey)

        let strict = try rill(["insert", path, "StrictAccount", #"{"id":9,"email":"ada@example.com","name":"X"}"#])
        #expect(strict.status == 1)
        #expect(strict.error.contains("StrictAccount 1 already has email = \"ada@example.com\""), "\(strict.error)")
        let moved = try rill(["update", path, "Account", #"{"id":2,"email":"ada@example.com"}"#])
        #expect(moved.status == 1)
        #expect(moved.error.contains("Account 2 cannot take email = \"ada@example.com\""), "\(moved.error)")
        #expect(try container.store.head() == 2, "the refused writes wrote nothing")
    }

    @Test func schemaExportAndImportCarryTheConstraints() throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Account.self, StrictAccount.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        container.mainContext.insert(Account(id: 1, email: "ada@example.com", name: "Ada"))
        try container.mainContext.save()

        let printed = try rill(["schema", path, "StrictAccount"])
        #expect(
            printed.status == 0 && printed.output.hasSuffix("  unique: (email) on conflict fail\n"), "\(printed.output)"
        )
        let json = try rill(["schema", "--json", path, "Account"])
        #expect(json.output.contains(#""indexes":["email"],"defaulted":[],"renamed":{},"unique":{"email":"upsert"}}"#))
        #expect(json.output.contains(#""unique":{"email":"upsert"}}]}"#), "\(json.output)")

        let exported = try rill(["export", path, "Account"])
        #expect(exported.output.hasPrefix(#"{"entity":"Account","identifier":"Int","indexes":["email"],"#))
        #expect(exported.output.contains(#""unique":{"email":"upsert"}}"#), "\(exported.output)")
        let copy = directory.path("copy")
        let imported = try rill(["import", copy], input: exported.output)
        #expect(imported.status == 0, "\(imported.error)")
        let store = try Store(directory: copy, options: StoreOptions(readOnly: true), create: false)
        #expect(try store.entity(named: "Account")?.indexes.map(\.uniqueness) == [.upsert])

        // An import's records are held to the constraint: the second takes the first's place.
        let twice = #"""
            {"entity":"Tag","identifier":"String","indexes":[],"unique":{"name":"fail"}}
            {"op":"insert","entity":"Tag","record":{"id":"a","name":"x"}}
            {"op":"insert","entity":"Tag","record":{"id":"b","name":"x"}}
            """#
        let refused = try rill(["import", directory.path("tags")], input: twice)
        #expect(
            refused.status == 1 && refused.error.contains("line 3: Tag a already has name = \"x\""), "\(refused.error)")
        #expect(!FileManager.default.fileExists(atPath: directory.path("tags")))

        // A description making an index of stored records unique, when two of them share values, fails whole.
        let plain = #"""
            {"entity":"Tag","identifier":"String","indexes":["name"]}
            {"op":"insert","entity":"Tag","record":{"id":"a","name":"x"}}
            {"op":"insert","entity":"Tag","record":{"id":"b","name":"x"}}
            """#
        let tags = directory.path("plain-tags")
        #expect(try rill(["import", tags], input: plain).status == 0)
        let unique = #"{"entity":"Tag","identifier":"String","indexes":["name"],"unique":{"name":"upsert"}}"#
        let made = try rill(
            ["import", tags], input: unique + "\n" + #"{"op":"insert","entity":"Tag","record":{"id":"c","name":"y"}}"#)
        #expect(made.status == 1)
        #expect(
            made.error.contains("line 1: Tag(name) cannot be unique: Tag b and Tag a both have name = \"x\""),
            "\(made.error)")
        let kept = try Store(directory: tags, options: StoreOptions(readOnly: true), create: false)
        #expect(try kept.entity(named: "Tag")?.indexes.map(\.uniqueness) == [nil])
        #expect(try kept.head() == 1)
    }
}
