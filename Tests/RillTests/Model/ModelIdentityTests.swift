import Foundation
import RillTestSupport
import Testing

@testable import Rill

/// A model type whose records would not read back as the model stored: its `id` not decoded (each
/// fetched model got a new one, so that deleting or replacing it changed nothing or made a second
/// record), or its value not a keyed container (every predicate on it answered nothing). The
/// container refuses such a type, naming it and the fix.
@Suite struct ModelIdentityTests {
    let directory = TemporaryDirectory()

    /// `id` left out of the coding keys, with a default.
    struct Memo: PersistentModel {
        var id = UUID()
        var text: String
        enum CodingKeys: CodingKey { case text }
    }

    /// Stored as one value.
    struct Counter: PersistentModel {
        var id: Int
        init(id: Int) { self.id = id }
        init(from decoder: any Decoder) throws { id = try decoder.singleValueContainer().decode(Int.self) }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(id)
        }
    }

    /// Stored under another key, and read back: nothing wrong.
    struct Renamed: PersistentModel, Equatable {
        var id: UUID
        var text: String
        enum CodingKeys: String, CodingKey {
            case id = "_id"
            case text
        }
    }

    /// An id computed from a stored field: read back as stored.
    struct Account: PersistentModel, Equatable {
        var email: String
        var id: String { email }
    }

    func open(_ type: any PersistentModel.Type, _ name: String) throws -> ModelContainer {
        try ModelContainer(
            for: type, configurations: ModelConfiguration(url: directory.url.appendingPathComponent(name)))
    }

    @Test func aModelWhoseIdIsNotStoredIsRefused() throws {
        let error = try #require(throws: RillError.self) { try open(Memo.self, "memo") }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains("Memo's id is not read from its stored record"), "\(error.message)")
        #expect(error.message.contains("CodingKeys"), "\(error.message)")
    }

    @Test func aModelStoredAsOneValueIsRefused() throws {
        let error = try #require(throws: RillError.self) { try open(Counter.self, "counter") }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains("Counter is not stored as keyed fields"), "\(error.message)")
    }

    @Test func renamedAndComputedIdentifiersReadBack() throws {
        let container = try ModelContainer(
            for: Renamed.self, Account.self,
            configurations: ModelConfiguration(url: directory.url.appendingPathComponent("fine")))
        let context = ModelContext(container)
        let renamed = Renamed(id: UUID(), text: "a")
        context.insert(renamed)
        context.insert(Account(email: "a@example.com"))
        try context.save()
        #expect(try context.model(Renamed.self, id: renamed.id) == renamed)
        let account = try #require(try context.fetch(FetchDescriptor<Account>()).first)
        context.delete(account)
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Account>()) == 0)
    }
}
