import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Live queries that hold the same record share one row of it (`SharedRows`), exactly: only
/// rows made of equal stored bytes, by the same model type and order, are shared.
@Suite struct SharedRowsTests {
    let directory = TemporaryDirectory()

    /// A model with an index, so that live queries load through index walks.
    struct Scored: PersistentModel, Equatable {
        var id: Int
        var score: Int
        var note: String = ""

        static let indexes: [ModelIndex<Scored>] = [ModelIndex(\.score)]
    }

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
                table.row(key: key, bytes: bytes, variant: variant) { key, _ in Probe(key: key, label: label) }
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

    /// A row made for one order of a model type is given the row of the same bytes that another
    /// order of that type made, whose model it can take; never one of other bytes or of another
    /// model type.
    @Test func aRowOfTheSameBytesAndModelTypeIsOfferedToAnotherOrder() {
        let table = SharedRows()
        let ascending = SharedRows.variant(
            entity: "Counter", model: Counter.self, orderPaths: [QuerySortKey(path: ["value"])])
        let descending = SharedRows.variant(
            entity: "Counter", model: Counter.self, orderPaths: [QuerySortKey(path: ["value"], ascending: false)])
        let unsorted = SharedRows.variant(entity: "Counter", model: Counter.self, orderPaths: nil)
        let otherModel = SharedRows.variant(entity: "Counter", model: Gadget.self, orderPaths: nil)
        #expect(ascending.model == descending.model && ascending.model == unsorted.model)
        #expect(otherModel.model != ascending.model)
        func row(_ bytes: [UInt8], _ variant: SharedRows.Variant, label: String) -> (LiveEntry, offered: LiveEntry?) {
            var offered: LiveEntry?
            let made = ([1, 2] as [UInt8]).withUnsafeBytes { key in
                bytes.withUnsafeBytes { bytes in
                    table.row(key: key, bytes: bytes, variant: variant) { key, sameModel in
                        offered = sameModel
                        return Probe(key: key, label: label)
                    }
                }
            }
            return (made, offered)
        }
        let first = row([9, 9], ascending, label: "ascending")
        #expect(first.offered == nil)
        let second = row([9, 9], descending, label: "descending")
        #expect(second.offered === first.0)
        #expect(row([9, 9], unsorted, label: "unsorted").offered != nil)
        // Another model type decodes the bytes otherwise: nothing offered.
        #expect(row([9, 9], otherModel, label: "other model").offered == nil)
        // Other bytes: the rows of the bytes before are gone, nothing offered.
        let changed = row([9, 8], descending, label: "changed")
        #expect(changed.offered == nil)
        #expect(row([9, 8], ascending, label: "changed ascending").offered === changed.0)
    }

    /// A load takes a record's bytes from the table only at the snapshot they were read at.
    @Test func knownBytesAreThoseReadAtTheSameSnapshot() throws {
        let table = SharedRows()
        // Two entities' databases of records, of a store.
        let container = try ModelContainer(
            for: Counter.self, Gadget.self,
            configurations: ModelConfiguration(url: directory.url.appendingPathComponent("databases")))
        let context = ModelContext(container)
        context.insert(Counter(id: 1, value: 1))
        var random = SeededGenerator(label: "known databases")
        context.insert(Gadget.random(id: 1, using: &random))
        try context.save()
        let records = try #require(try container.store.entity(named: "Counter")).recordsHandle
        let other = try #require(try container.store.entity(named: "Gadget")).recordsHandle
        #expect(records != other)
        let variant = SharedRows.variant(entity: "Counter", model: Counter.self, orderPaths: nil)
        func row(_ bytes: [UInt8], snapshot: UInt64) {
            ([1, 2] as [UInt8]).withUnsafeBytes { key in
                bytes.withUnsafeBytes { bytes in
                    _ = table.row(key: key, bytes: bytes, variant: variant, snapshot: snapshot) { key, _ in
                        Probe(key: key, label: "")
                    }
                }
            }
        }
        func known(at snapshot: UInt64, key: [UInt8] = [1, 2], in database: UInt32? = nil) -> [UInt8]? {
            key.withUnsafeBytes {
                table.known(entity: variant.entity, records: records, at: snapshot).bytes(
                    of: $0, in: database ?? records)
            }
        }
        row([9, 9], snapshot: 5)
        #expect(known(at: 5) == [9, 9])
        #expect(known(at: 6) == nil)
        #expect(known(at: 5, key: [1, 3]) == nil)
        #expect(
            table.known(entity: variant.entity + 1, records: records, at: 5).bytes(
                of: UnsafeRawBufferPointer(start: nil, count: 0), in: records) == nil)
        // A walk of another database (another entity's records) knows none of them.
        #expect(known(at: 5, in: other) == nil)
        // The same bytes read at a later snapshot: known there.
        row([9, 9], snapshot: 6)
        #expect(known(at: 6) == [9, 9])
        // A commit's bytes (snapshot 0) are known at no snapshot.
        row([9, 8], snapshot: 0)
        #expect(known(at: 6) == nil)
        #expect(known(at: 0) == nil)
        // Other bytes read at an older snapshot are known at that one only.
        row([9, 7], snapshot: 3)
        #expect(known(at: 3) == [9, 7])
        #expect(known(at: 6) == nil)
    }

    /// Many live queries loaded at each snapshot through index walks (forward and backward),
    /// with saves between the snapshots that change records the queries hold (their notes,
    /// which no predicate reads, and their scores): every query's results equal a fresh fetch
    /// as loaded and after the saves.
    @Test func loadsAtEachSnapshotEqualFreshFetches() throws {
        var random = SeededGenerator(label: "known records")
        let container = try ModelContainer(
            for: Scored.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("known")))
        let context = ModelContext(container)
        for id in 0..<300 { context.insert(Scored(id: id, score: Int.random(in: -50...50, using: &random))) }
        try context.save()
        var queries: [(LiveQuery<Scored>, FetchDescriptor<Scored>)] = []
        for round in 0..<8 {
            for query in 0..<6 {
                let low = Int.random(in: -60...40, using: &random)
                let high = low + Int.random(in: 0...60, using: &random)
                let sort =
                    query.isMultiple(of: 2) ? SortDescriptor(\Scored.score) : SortDescriptor(\.score, order: .reverse)
                let descriptor = FetchDescriptor<Scored>(
                    predicate: #Predicate { $0.score >= low && $0.score <= high }, sortBy: [sort])
                let live = try LiveQuery(descriptor, in: container, sharing: false)
                // As loaded: no save since.
                #expect(Array(live.results) == (try context.fetch(descriptor)), "loaded \(descriptor)")
                queries.append((live, descriptor))
            }
            for _ in 0..<Int.random(in: 1...20, using: &random) {
                let id = Int.random(in: 0..<320, using: &random)
                let score = Int.random(in: -50...50, using: &random)
                context.insert(Scored(id: id, score: score, note: "round \(round)"))
            }
            try context.save()
        }
        for (query, descriptor) in queries {
            try query.catchUp()
            #expect(Array(query.results) == (try context.fetch(descriptor)), "results of \(descriptor)")
        }
        #expect(container.store.sharedRows.reusedCount > 0)
    }

    /// A record that leaves every live query, then changes while none holds it, is read again by
    /// the next load: the bytes the table kept of it were read at an older snapshot.
    @Test(arguments: [SortOrder.forward, .reverse])
    func aRecordChangedWhileNoQueryHoldsItIsReadAgain(order: SortOrder) throws {
        let container = try ModelContainer(
            for: Scored.self,
            configurations: ModelConfiguration(url: directory.url.appendingPathComponent("left-\(order)")))
        let context = ModelContext(container)
        for id in 0..<10 { context.insert(Scored(id: id, score: id)) }
        try context.save()
        let low = try LiveQuery(
            FetchDescriptor<Scored>(
                predicate: #Predicate { $0.score < 5 }, sortBy: [SortDescriptor(\.score, order: order)]),
            in: container)
        // Record 3 leaves the only query that held it, then changes again while no query holds it.
        context.insert(Scored(id: 3, score: 50, note: "left"))
        try context.save()
        context.insert(Scored(id: 3, score: 7, note: "changed unheld"))
        try context.save()
        try low.catchUp()
        // A load at the first snapshot's bytes would show record 3 with score 3.
        let descriptor = FetchDescriptor<Scored>(
            predicate: #Predicate { $0.score >= 0 }, sortBy: [SortDescriptor(\.score, order: order)])
        let all = try LiveQuery(descriptor, in: container)
        #expect(Array(all.results) == (try context.fetch(descriptor)))
        #expect(all.results.first { $0.id == 3 } == Scored(id: 3, score: 7, note: "changed unheld"))
        withExtendedLifetime(low) {}
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
