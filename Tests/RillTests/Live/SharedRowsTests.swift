import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Live queries that hold the same record share one row of it (`SharedRows`), exactly: only
/// rows made of equal stored bytes, by the same model type and order, are shared.
@Suite struct SharedRowsTests {
    let directory = TemporaryDirectory()

    final class Probe: LiveEntry, @unchecked Sendable {
        let label: String
        init(key: [UInt8], label: String) {
            self.label = label
            super.init(key: key, order: nil)
        }
    }

    static func row(
        _ table: SharedRows, key: [UInt8], bytes: [UInt8], variant: SharedRows.Variant, label: String
    ) -> LiveEntry {
        key.withUnsafeBytes { key in
            bytes.withUnsafeBytes { bytes in
                table.row(key: key, bytes: bytes, variant: variant) { Probe(key: $0, label: label) }
            }
        }
    }

    @Test func onlyEqualBytesOfOneVariantAndEntityShareARow() {
        let table = SharedRows()
        let sorted = SharedRows.variant(
            entity: "Counter", model: Counter.self, orderPaths: [QuerySortKey(path: ["value"])])
        let unsorted = SharedRows.variant(entity: "Counter", model: Counter.self, orderPaths: nil)
        let otherEntity = SharedRows.variant(entity: "Gadget", model: Gadget.self, orderPaths: nil)
        #expect(sorted != unsorted)
        #expect(
            sorted
                == SharedRows.variant(
                    entity: "Counter", model: Counter.self, orderPaths: [QuerySortKey(path: ["value"])]))
        let first = Self.row(table, key: [1, 2], bytes: [9, 9, 9], variant: sorted, label: "first")
        // The same bytes and variant: the row made first.
        #expect(Self.row(table, key: [1, 2], bytes: [9, 9, 9], variant: sorted, label: "again") === first)
        // Another variant, another entity, another key, other bytes: rows of their own.
        let other = Self.row(table, key: [1, 2], bytes: [9, 9, 9], variant: unsorted, label: "unsorted")
        #expect(other !== first)
        #expect(Self.row(table, key: [1, 2], bytes: [9, 9, 9], variant: otherEntity, label: "gadget") !== first)
        #expect(Self.row(table, key: [1, 3], bytes: [9, 9, 9], variant: sorted, label: "key") !== first)
        let changed = Self.row(table, key: [1, 2], bytes: [9, 9, 8], variant: sorted, label: "changed")
        #expect(changed !== first)
        #expect((changed as? Probe)?.label == "changed")
        // Bytes of the same length and prefix, one byte longer or shorter: not equal.
        #expect(Self.row(table, key: [1, 2], bytes: [9, 9, 8, 0], variant: sorted, label: "longer") !== changed)
        #expect(Self.row(table, key: [1, 2], bytes: [9, 9], variant: sorted, label: "shorter") !== changed)
        // Empty bytes are bytes like any others.
        let empty = Self.row(table, key: [7], bytes: [], variant: sorted, label: "empty")
        #expect(Self.row(table, key: [7], bytes: [], variant: sorted, label: "empty again") === empty)
    }

    @Test func aSweepFreesOnlyRowsNothingElseHolds() {
        let table = SharedRows()
        let variant = SharedRows.variant(entity: "Counter", model: Counter.self, orderPaths: nil)
        var kept: [LiveEntry] = []
        for index in 0..<100 {
            let row = Self.row(table, key: [UInt8(index)], bytes: [1], variant: variant, label: "\(index)")
            if index.isMultiple(of: 2) { kept.append(row) }
        }
        #expect(table.recordCount == 100)
        table.sweep()
        #expect(table.recordCount == 50)
        // The kept rows are still the ones shared.
        for (index, row) in kept.enumerated() {
            #expect(Self.row(table, key: [UInt8(index * 2)], bytes: [1], variant: variant, label: "new") === row)
        }
        kept.removeAll()
        table.sweep()
        #expect(table.recordCount == 0)
    }

    /// Random live queries over one store, loaded between random saves: the rows of queries
    /// holding a record are one object when the record's bytes are those both read, and every
    /// query's results equal a fresh fetch.
    @Test func liveQueriesShareRowsOfTheRecordsTheyHoldAlike() throws {
        var random = SeededGenerator(label: "shared rows")
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = ModelContext(container)
        for id in 0..<200 { context.insert(Counter(id: id, value: Int.random(in: -50...50, using: &random))) }
        try context.save()
        var queries: [(LiveQuery<Counter>, FetchDescriptor<Counter>)] = []
        for round in 0..<30 {
            let low = Int.random(in: -60...40, using: &random)
            let high = low + Int.random(in: 0...60, using: &random)
            let descriptor = FetchDescriptor<Counter>(
                predicate: #Predicate { $0.value >= low && $0.value <= high },
                sortBy: [round.isMultiple(of: 2) ? SortDescriptor(\.value) : SortDescriptor(\.value, order: .reverse)])
            queries.append((try LiveQuery(descriptor, in: container, sharing: false), descriptor))
            for _ in 0..<Int.random(in: 0...5, using: &random) {
                let id = Int.random(in: 0..<220, using: &random)
                if Bool.random(using: &random) {
                    context.insert(Counter(id: id, value: Int.random(in: -50...50, using: &random)))
                } else if let existing = try context.fetch(
                    FetchDescriptor<Counter>(predicate: #Predicate { $0.id == id })
                ).first {
                    context.delete(existing)
                }
            }
            try context.save()
        }
        var held = 0
        for (query, descriptor) in queries {
            try query.catchUp()
            #expect(Array(query.results) == (try context.fetch(descriptor)), "results of \(descriptor)")
            held += query.results.count
        }
        // Rows of a record were made once per order, not once per query (the ranges overlap).
        let shared = container.store.sharedRows
        print("shared rows: \(held) rows held, \(shared.recordCount) records shared, \(shared.reusedCount) reused")
        #expect(shared.reusedCount > held / 4)
        #expect(shared.recordCount <= 220)
    }
}
