import Foundation
import RillTestSupport
import Testing

@testable import Rill

/// Errors name their true cause: the index and field a key is too long for. (A full disk while
/// creating a store's directory, reported as a permission problem before, is tested with the
/// other full-disk cases in `DamagedStoreTests`.)
@Suite struct ErrorCauseTests {
    let directory = TemporaryDirectory()

    func gadget(maker: String) -> Gadget {
        Gadget(
            id: 7, name: "g", maker: maker, price: 1, stock: 2, rating: nil, tags: [],
            released: Date(timeIntervalSinceReferenceDate: 0), active: true,
            spec: Gadget.Spec(weight: 1, color: "red"))
    }

    @Test func keyTooLongForAnIndexNamesTheIndexTheFieldAndTheRecord() throws {
        let path = directory.path("store")
        let context = ModelContext(
            try ModelContainer(for: Gadget.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path))))
        context.insert(gadget(maker: String(repeating: "m", count: 600)))
        let error = #expect(throws: RillError.self) { try context.save() }
        #expect(error?.code == .invalidRecord)
        let message = error?.message ?? ""
        #expect(message.contains("Gadget 7"), "\(message)")
        #expect(message.contains("index Gadget(maker,stock)"), "\(message)")
        #expect(message.contains("`maker` 60"), "\(message)")
        #expect(message.contains("`stock`"), "\(message)")

        // Through the CLI, with the same words.
        let insert = try runBuilt(
            "rill", ["insert", path, "Gadget", #"{"id":8,"maker":"\#(String(repeating: "m", count: 600))"}"#])
        #expect(insert.status == 1)
        #expect(insert.error.contains("index Gadget(maker,stock)"), "\(insert.error)")
    }

    @Test func buildingAnIndexOverALongValueNamesTheIndexAndTheField() throws {
        struct Plain: PersistentModel {
            static let entityName = "Gadget"
            var id: Int
            var maker: String
        }
        let path = directory.path("store")
        do {
            let context = ModelContext(
                try ModelContainer(for: Plain.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
            )
            context.insert(Plain(id: 3, maker: String(repeating: "é", count: 300)))
            try context.save()
        }
        let error = #expect(throws: RillError.self) {
            _ = try ModelContainer(
                for: Gadget.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        }
        let message = error?.message ?? ""
        #expect(message.contains("Gadget 3") && message.contains("index Gadget(maker,stock)"), "\(message)")
        #expect(message.contains("`maker` 60"), "\(message)")
    }
}
