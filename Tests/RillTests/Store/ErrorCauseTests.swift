import Foundation
import RillTestSupport
import Testing

@testable import Rill

/// Errors name their true cause: the index and field a key is too long for. (A full disk while
/// creating a store's directory, reported as a permission problem before, is tested with the
/// other full-disk cases in `DamagedStoreTests`.)
@Suite struct ErrorCauseTests {
    let directory = TemporaryDirectory()

    /// Values of any length fit an index of up to 29 fields, cut to a prefix; past that, the
    /// values alone can fill a key. Such an index of 31 string fields, each value cut to 17 bytes.
    static let fields = (0..<31).map { "f\($0)" }
    static let indexName = fields.joined(separator: ",")

    static func wide(id: Int64) -> RecordValue {
        .map(
            [RecordField(name: "id", value: .int(id))]
                + fields.map { RecordField(name: $0, value: .string(String(repeating: "w", count: 40))) })
    }

    @Test func keyTooLongForAnIndexNamesTheIndexTheFieldAndTheRecord() throws {
        let path = directory.path("store")
        do {
            let store = try Store(directory: path, options: .init(), create: true)
            let entity = try store.registerEntity(
                named: "Wide", identifierKind: .integer, indexes: [Self.fields.map { [$0] }])
            let change = PreparedChange(
                entity: entity, key: 7.storageKey, operation: .upsert(Self.wide(id: 7).recordBytes()))
            let error = #expect(throws: RillError.self) { try store.commit([change], author: nil) }
            #expect(error?.code == .invalidRecord)
            let message = error?.message ?? ""
            #expect(message.contains("Wide 7"), "\(message)")
            #expect(message.contains("index Wide(\(Self.indexName))"), "\(message)")
            #expect(message.contains("`f0` 17 bytes"), "\(message)")
            #expect(message.contains("`f30`"), "\(message)")
        }

        // Through the CLI, with the same words.
        let insert = try runBuilt("rill", ["insert", path, "Wide", Self.wide(id: 8).jsonString()])
        #expect(insert.status == 1)
        #expect(insert.error.contains("index Wide(\(Self.indexName))"), "\(insert.error)")
    }

    @Test func buildingAnIndexOverTooManyValuesNamesTheIndexAndTheField() throws {
        let store = try Store(directory: directory.path("store"), options: .init(), create: true)
        let entity = try store.registerEntity(named: "Wide", identifierKind: .integer)
        _ = try store.commit(
            [PreparedChange(entity: entity, key: 3.storageKey, operation: .upsert(Self.wide(id: 3).recordBytes()))],
            author: nil)
        let error = #expect(throws: RillError.self) {
            _ = try store.registerEntity(named: "Wide", identifierKind: .integer, indexes: [Self.fields.map { [$0] }])
        }
        let message = error?.message ?? ""
        #expect(message.contains("Wide 3") && message.contains("index Wide(\(Self.indexName))"), "\(message)")
        #expect(message.contains("`f0` 17 bytes"), "\(message)")
        #expect(try store.entity(named: "Wide")?.indexes.isEmpty == true)
    }
}
