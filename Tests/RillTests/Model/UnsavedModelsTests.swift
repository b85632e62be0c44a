import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// `insertedModelsArray`, `changedModelsArray` and `deletedModelsArray`: a context's staged
/// changes classified against the store, checked against a brute-force account of what is stored
/// and staged, and against what the next save records in the log.
@Suite struct UnsavedModelsTests {
    let directory = TemporaryDirectory()

    struct Parcel: PersistentModel, Equatable {
        var id: Int
        var label: String
        var weight: Int
    }

    struct Crate: PersistentModel, Equatable {
        var id: String
        var contents: [String]
    }

    /// What the three lists should hold, by entity and identifier.
    struct Account: Equatable {
        var inserted: [String] = []
        var changed: [String] = []
        var deleted: [String] = []
    }

    static func name(_ model: any PersistentModel) -> String {
        func name<M: PersistentModel>(_ model: M) -> String { "\(M.entityName)/\(model.id)" }
        return name(model)
    }

    static func account(_ context: ModelContext) -> Account {
        Account(
            inserted: context.insertedModelsArray.map(name), changed: context.changedModelsArray.map(name),
            deleted: context.deletedModelsArray.map(name))
    }

    @Test func theListsFollowTheStoreAndWhatTheNextSaveRecords() throws {
        var random = SeededGenerator(label: "unsaved models")
        let container = try ModelContainer(
            for: Parcel.self, Crate.self, Cake.self, Drink.self,
            configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = ModelContext(container)
        // The oracle's store: entity/id → the stored model.
        var stored: [String: any PersistentModel] = [:]

        for round in 0..<40 {
            // Staged changes in order of first staging: entity/id → the model, or nil to delete.
            var order: [String] = []
            var staged: [String: (any PersistentModel)?] = [:]
            func stage(_ model: any PersistentModel, delete: Bool) {
                let key = Self.name(model)
                if staged[key] == nil { order.append(key) }
                staged[key] = delete ? .some(nil) : .some(model)
                if delete { context.delete(model) } else { context.insert(model) }
            }
            for _ in 0..<Int.random(in: 0...25, using: &random) {
                let id = Int.random(in: 0..<30, using: &random)
                let model: any PersistentModel =
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0: Parcel(id: id, label: "p\(id % 4)", weight: Int.random(in: 0...2, using: &random))
                    case 1:
                        Crate(
                            id: "c\(id)", contents: Array(repeating: "x", count: Int.random(in: 0...1, using: &random)))
                    case 2:
                        Cake(id: id, name: "cake", rating: Int.random(in: 0...1, using: &random), minutes: 5, tags: [])
                    default:
                        Drink(id: id, name: "drink", rating: 1, caffeinated: Bool.random(using: &random), volume: nil)
                    }
                stage(model, delete: Int.random(in: 0..<3, using: &random) == 0)
            }

            var expected = Account()
            for key in order {
                switch (staged[key]!, stored[key]) {
                case (let model?, nil):
                    expected.inserted.append(Self.name(model))
                case (let model?, let old?):
                    if try ModelContext.encode(model) != ModelContext.encode(old) { expected.changed.append(key) }
                case (nil, _?):
                    expected.deleted.append(key)
                case (nil, nil):
                    break
                }
            }
            let account = Self.account(context)
            #expect(account == expected, "round \(round), seed \(random.seed)")
            #expect(context.hasChanges == !order.isEmpty)
            // The deleted models are the stored ones, whichever kind of the family they are.
            for model in context.deletedModelsArray {
                let old = try #require(stored[Self.name(model)])
                #expect(try ModelContext.encode(model) == ModelContext.encode(old))
                #expect(type(of: model) == type(of: old))
            }

            if Bool.random(using: &random) {
                context.rollback()
                #expect(Self.account(context) == Account())
                continue
            }
            let sequence = try context.save()
            #expect(Self.account(context) == Account())
            var recorded = Account()
            if let sequence {
                var descriptor = HistoryDescriptor()
                descriptor.after = HistoryToken(sequence: sequence - 1)
                let transaction = try #require(try context.fetchHistory(descriptor).first)
                for change in transaction.changes {
                    let key = "\(change.entityName)/\(change.identifierDescription)"
                    switch change.kind {
                    case .insert: recorded.inserted.append(key)
                    case .update: recorded.changed.append(key)
                    case .delete: recorded.deleted.append(key)
                    }
                }
            }
            // What the lists said the save would do is what it did (up to order: a save groups
            // its changes by entity).
            #expect(recorded.inserted.sorted() == expected.inserted.sorted(), "round \(round), seed \(random.seed)")
            #expect(recorded.changed.sorted() == expected.changed.sorted(), "round \(round), seed \(random.seed)")
            #expect(recorded.deleted.sorted() == expected.deleted.sorted(), "round \(round), seed \(random.seed)")
            for key in order {
                stored[key] = staged[key]!
            }
        }
    }

    @Test func anEmptyContextListsNothingAndReadsNoStore() throws {
        let container = try ModelContainer(
            for: Parcel.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("empty")))
        let context = container.mainContext
        #expect(Self.account(context) == Account())
        // A deletion of a model never saved is not a deletion the store would see.
        context.delete(Parcel(id: 1, label: "a", weight: 1))
        #expect(Self.account(context) == Account())
        context.insert(Parcel(id: 1, label: "a", weight: 1))
        #expect(Self.account(context) == Account(inserted: ["Parcel/1"]))
        #expect(context.insertedModelsArray.first as? Parcel == Parcel(id: 1, label: "a", weight: 1))
    }
}
