import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// A model with indexes on some of its fields, so that fetches of pending changes meet index
/// plans as well as full scans.
struct Ledger: PersistentModel, Equatable {
    var id: Int
    var group: Int
    var amount: Double
    var label: String
    var flag: Bool
    var note: String?

    static let indexes: [ModelIndex<Ledger>] = [ModelIndex(\.group), ModelIndex(\.amount), ModelIndex(\.label)]
}

/// Fetches of a context with unsaved changes, against Swift's own evaluation of the same
/// descriptor over the models the context would hold after saving (and, with
/// `includePendingChanges` false, over the saved models): predicates (indexed and not), sorts,
/// offsets, limits, counts, identifiers and enumerations in batches, seeded and printed.
@Suite struct PendingFetchOracleTests {
    let directory = TemporaryDirectory()

    static let labels = ["a", "B", "ab", "b", "", "é", "e\u{301}", "z"]

    static func randomLedger(id: Int, using random: inout SeededGenerator) -> Ledger {
        Ledger(
            id: id, group: Int.random(in: -2...3, using: &random),
            amount: [-1.5, 0, 0.5, 2, 7.25, -0.0, 1e300].randomElement(using: &random)!,
            label: labels.randomElement(using: &random)!, flag: Bool.random(using: &random),
            note: Bool.random(using: &random) ? nil : labels.randomElement(using: &random)!)
    }

    /// Stages random inserts, replacements and deletes in `context`, mirrored in `models`.
    static func stage(
        _ count: Int, in context: ModelContext, models: inout [Int: Ledger], using random: inout SeededGenerator
    ) {
        for _ in 0..<count {
            let id = Int.random(in: -20...20, using: &random)
            if Int.random(in: 0..<4, using: &random) == 0 {
                context.delete(randomLedger(id: id, using: &random))
                models[id] = nil
            } else {
                let ledger = randomLedger(id: id, using: &random)
                context.insert(ledger)
                models[id] = ledger
            }
        }
    }

    static func randomPredicate(using random: inout SeededGenerator) -> (Predicate<Ledger>?, String) {
        let g = Int.random(in: -2...3, using: &random)
        let a = [-1.5, 0, 0.5, 2, 7.25].randomElement(using: &random)!
        let l = labels.randomElement(using: &random)!
        switch Int.random(in: 0..<10, using: &random) {
        case 0: return (nil, "all")
        case 1: return (#Predicate { $0.group == g }, "group == \(g)")
        case 2: return (#Predicate { $0.amount > a }, "amount > \(a)")
        case 3: return (#Predicate { $0.amount <= a && $0.group != g }, "amount <= \(a) && group != \(g)")
        case 4: return (#Predicate { $0.label == l }, "label == \(l)")
        case 5: return (#Predicate { $0.label < l || $0.flag }, "label < \(l) || flag")
        case 6: return (#Predicate { $0.note == nil }, "note == nil")
        case 7: return (#Predicate { ($0.note ?? "") == l }, "note ?? '' == \(l)")
        case 8: return (#Predicate { $0.group >= g && $0.group < g + 2 }, "group in \(g)..<\(g + 2)")
        default: return (#Predicate { !$0.flag && $0.label.contains(l) }, "!flag && label contains \(l)")
        }
    }

    static func randomSort(using random: inout SeededGenerator) -> ([SortDescriptor<Ledger>], String) {
        let order: SortOrder = Bool.random(using: &random) ? .forward : .reverse
        switch Int.random(in: 0..<5, using: &random) {
        case 0: return ([], "none")
        case 1: return ([SortDescriptor(\.amount, order: order), SortDescriptor(\.id)], "amount \(order), id")
        case 2:
            return ([SortDescriptor(\.group, order: order), SortDescriptor(\.id, order: order)], "group, id \(order)")
        case 3: return ([SortDescriptor(\.label, order: order), SortDescriptor(\.id)], "label \(order), id")
        default: return ([SortDescriptor(\.id, order: order)], "id \(order)")
        }
    }

    @Test func fetchesOfUnsavedChangesMatchSwiftsEvaluation() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("PendingFetchOracleTests seed \(seed)")
        var random = SeededGenerator(seed: seed)
        let container = try ModelContainer(
            for: Ledger.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        var saved: [Int: Ledger] = [:]
        for round in 0..<40 {
            let context = ModelContext(container)
            Self.stage(Int.random(in: 0...12, using: &random), in: context, models: &saved, using: &random)
            try context.save()
            var pending = saved
            Self.stage(Int.random(in: 1...10, using: &random), in: context, models: &pending, using: &random)
            for _ in 0..<8 {
                let (predicate, predicateText) = Self.randomPredicate(using: &random)
                let (sort, sortText) = Self.randomSort(using: &random)
                var descriptor = FetchDescriptor<Ledger>(predicate: predicate, sortBy: sort)
                if Bool.random(using: &random) { descriptor.fetchOffset = Int.random(in: 0...5, using: &random) }
                if Bool.random(using: &random) { descriptor.fetchLimit = Int.random(in: 0...6, using: &random) }
                var expected = try pending.values.filter { try predicate?.evaluate($0) ?? true }
                expected =
                    sort.isEmpty
                    ? expected.sorted { $0.id < $1.id } : expected.sorted(using: sort)
                let all = expected
                expected = Array(expected.dropFirst(descriptor.fetchOffset ?? 0))
                if let limit = descriptor.fetchLimit { expected = Array(expected.prefix(limit)) }
                let label =
                    "seed \(seed), round \(round): \(predicateText), sort \(sortText), "
                    + "offset \(descriptor.fetchOffset ?? 0), limit \(descriptor.fetchLimit.map(String.init) ?? "-")"
                #expect(try context.fetch(descriptor) == expected, "\(label)")
                #expect(try context.fetchCount(descriptor) == expected.count, "count, \(label)")
                #expect(try context.fetchIdentifiers(descriptor) == expected.map(\.id), "identifiers, \(label)")
                var enumerated: [Ledger] = []
                let batchSize = Int.random(in: 0...4, using: &random)
                try context.enumerate(descriptor, batchSize: batchSize) { enumerated.append($0) }
                #expect(enumerated == expected, "enumerate in batches of \(batchSize), \(label)")
                var savedOnly = descriptor
                savedOnly.includePendingChanges = false
                var savedExpected = try saved.values.filter { try predicate?.evaluate($0) ?? true }
                savedExpected =
                    sort.isEmpty ? savedExpected.sorted { $0.id < $1.id } : savedExpected.sorted(using: sort)
                savedExpected = Array(savedExpected.dropFirst(descriptor.fetchOffset ?? 0))
                if let limit = descriptor.fetchLimit { savedExpected = Array(savedExpected.prefix(limit)) }
                #expect(try context.fetch(savedOnly) == savedExpected, "saved only, \(label)")
                #expect(try context.fetchCount(savedOnly) == savedExpected.count, "saved only count, \(label)")
                #expect(
                    try context.fetchIdentifiers(savedOnly) == savedExpected.map(\.id),
                    "saved only identifiers, \(label)")
                enumerated = []
                try context.enumerate(savedOnly, batchSize: batchSize) { enumerated.append($0) }
                #expect(enumerated == savedExpected, "saved only enumerate, \(label)")
                var unwindowed = descriptor
                unwindowed.fetchOffset = nil
                unwindowed.fetchLimit = nil
                #expect(try context.fetchCount(unwindowed) == all.count, "unwindowed count, \(label)")
            }
            for id in -20...20 {
                #expect(try context.model(Ledger.self, id: id) == pending[id], "seed \(seed), round \(round): id \(id)")
            }
            context.rollback()
        }
    }

    @Test func transactionSavesWhatItsBlockStagedOrNothingWhenItThrows() throws {
        struct Refused: Error {}
        let container = try ModelContainer(
            for: Ledger.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("tx")))
        let context = ModelContext(container)
        let first = Ledger(id: 1, group: 0, amount: 1, label: "a", flag: false)
        let second = Ledger(id: 2, group: 0, amount: 2, label: "b", flag: true)
        let sequence = try context.transaction {
            context.insert(first)
            context.insert(second)
        }
        #expect(sequence != nil)
        #expect(!context.hasChanges)
        #expect(try ModelContext(container).fetch(FetchDescriptor<Ledger>()) == [first, second])

        // A change staged before the block stays staged; the block's changes go when it throws.
        var renamed = first
        renamed.label = "renamed"
        context.insert(renamed)
        #expect(throws: Refused.self) {
            try context.transaction {
                context.delete(second)
                context.insert(Ledger(id: 3, group: 1, amount: 3, label: "c", flag: false))
                throw Refused()
            }
        }
        #expect(try context.fetch(FetchDescriptor<Ledger>()) == [renamed, second])
        #expect(try ModelContext(container).fetch(FetchDescriptor<Ledger>()) == [first, second])
        #expect(try context.transaction {} != nil)
        #expect(try ModelContext(container).fetch(FetchDescriptor<Ledger>()) == [renamed, second])
        #expect(try context.transaction {} == nil)
    }

    @Test func familyFetchesLeaveOutPendingChangesWhenAsked() throws {
        let container = try ModelContainer(
            for: Cake.self, Drink.self, Soup.self,
            configurations: ModelConfiguration(url: directory.url.appendingPathComponent("family")))
        let context = ModelContext(container)
        let cake = Cake(id: 1, name: "tart", rating: 3, minutes: 20, tags: [])
        context.insert(cake)
        try context.save()
        context.insert(Drink(id: 2, name: "Tea", rating: 5, caffeinated: true))
        context.delete(cake)
        var descriptor = FamilyDescriptor<any Dish>(sortBy: [SortDescriptor(\.rating)])
        #expect(try context.fetch(descriptor).map { $0.id } == [2])
        descriptor.includePendingChanges = false
        #expect(try context.fetch(descriptor).map { $0.id } == [1])
        #expect(try context.fetchCount(descriptor) == 1)
    }
}
