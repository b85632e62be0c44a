import Foundation
import RillStorage
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// A save puts its new records' index keys at its end, in key order (`DeferredIndexPuts`): the
/// projections and indexes it leaves are byte for byte those of the same changes saved one a
/// save, where nothing waits, for saves that insert, insert again, update and delete the same
/// records within one save, with values cut at the index keys' limit, keys of one prefix, extreme
/// numbers, a unique index and a compound one; the same for the commits applied in one
/// transaction as a replica applies another node's; and `check` holds them to a replay of the log.
@Suite struct DeferredIndexPutsTests {
    let directory = TemporaryDirectory()

    static let indexes: [[[String]]] = [[["title"]], [["group"], ["score"]], [["score"]], [["code"]]]

    static func makeStore(at path: String) throws -> (Store, EntityStorage, EntityStorage) {
        let store = try Store(directory: path, options: StoreOptions(), create: true)
        let item = try store.registerEntity(named: "Item", identifierKind: .integer, indexes: indexes)
        let coded = try store.registerEntity(
            named: "Coded", identifierKind: .integer, indexes: [[["code"]], [["title"]]], uniqueness: ["code": .upsert])
        return (store, item, coded)
    }

    /// Random changes over few identifiers, so that a save often touches a record twice.
    static func randomChanges(
        _ count: Int, item: EntityStorage, coded: EntityStorage, generator: inout SeededGenerator
    ) -> [PreparedChange] {
        let prefix = String(repeating: "p", count: 300)
        func title() -> RecordValue {
            switch Int.random(in: 0..<4, using: &generator) {
            // Past the cut of a key: records share the key's values, listed in its value.
            case 0: .string(prefix + "\(Int.random(in: 0..<3, using: &generator))")
            case 1: .string("")
            case 2: .string("t\(Int.random(in: 0..<40, using: &generator))")
            default: .null
            }
        }
        func score() -> RecordValue {
            switch Int.random(in: 0..<6, using: &generator) {
            case 0: .int(.min)
            case 1: .int(.max)
            case 2: .double(Double.random(in: -1...1, using: &generator))
            case 3: .uint(.max)
            default: .int(Int64.random(in: -20...20, using: &generator))
            }
        }
        return (0..<count).map { _ in
            let entity = Int.random(in: 0..<4, using: &generator) == 0 ? coded : item
            let id = Int.random(in: 0..<60, using: &generator)
            let key = id.storageKey
            // Every record names its identifier: a unique index's upsert moves a value to it.
            let identifier = RecordField(name: "id", value: .int(Int64(id)))
            let fields = [
                RecordField(name: "title", value: title()),
                RecordField(name: "group", value: .int(Int64.random(in: 0..<4, using: &generator))),
                RecordField(name: "score", value: score()),
                // Unique in Coded (taken by no other record): its unique index is put at once.
                RecordField(
                    name: "code",
                    value: .int(entity.name == coded.name ? Int64(id) : Int64.random(in: 0..<30, using: &generator))),
                RecordField(name: "note", value: .string("n")),
            ]
            let operation: PreparedChange.Operation =
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<5: .upsert(RecordValue.map([identifier] + fields).recordBytes())
                case 5: .insertIfAbsent(RecordValue.map([identifier] + fields).recordBytes())
                case 6, 7: .delete
                default:
                    .upsert(RecordValue.map([identifier] + fields.shuffled(using: &generator).prefix(3)).recordBytes())
                }
            return PreparedChange(entity: entity, key: key, operation: operation)
        }
    }

    /// The databases whose entries differ, with their entry counts: the contents themselves are
    /// too long to print.
    static func differences(_ left: Store, _ right: Store) throws -> [String] {
        let (left, right) = (try RebuildTests.contents(of: left), try RebuildTests.contents(of: right))
        return Set(left.keys).union(right.keys).sorted().filter { left[$0] != right[$0] }.map {
            "\($0): \(left[$0]?.count ?? 0) against \(right[$0]?.count ?? 0) entries"
        }
    }

    @Test func aSaveLeavesTheIndexesOfTheSameChangesSavedOneBySave() throws {
        var generator = SeededGenerator(label: "deferred-index-puts")
        let (batched, item, coded) = try Self.makeStore(at: directory.path("batched"))
        let (single, singleItem, singleCoded) = try Self.makeStore(at: directory.path("single"))
        for save in 0..<40 {
            let size = save % 5 == 0 ? 600 : Int.random(in: 1...80, using: &generator)
            let changes = Self.randomChanges(size, item: item, coded: coded, generator: &generator)
            _ = try batched.commit(changes, author: nil)
            for change in changes {
                let entity = change.entityName == item.name ? singleItem : singleCoded
                _ = try single.commit(
                    [PreparedChange(entity: entity, key: change.key, operation: change.operation)], author: nil)
            }
            let differing = try Self.differences(batched, single)
            #expect(differing.isEmpty, "save \(save), seed \(generator.seed): \(differing)")
            guard differing.isEmpty else { return }
        }
        // Last, a save of new records only: nothing removes a key after them, so what is held
        // is put by the end of the save (or of the transaction applying it) alone.
        let fresh = (1_000..<1_100).map { id in
            PreparedChange(
                entity: item, key: id.storageKey,
                operation: .upsert(
                    RecordValue.map([
                        RecordField(name: "id", value: .int(Int64(id))),
                        RecordField(name: "title", value: .string("f\(id)")),
                        RecordField(name: "score", value: .int(Int64(id % 7))),
                    ]).recordBytes()))
        }
        _ = try batched.commit(fresh, author: nil)
        for change in fresh {
            _ = try single.commit(
                [PreparedChange(entity: singleItem, key: change.key, operation: change.operation)], author: nil)
        }
        #expect(try Self.differences(batched, single).isEmpty, "seed \(generator.seed)")
        // Another node's commits applied in one transaction (as a replica catching up): the same.
        let (replayed, _, _) = try Self.makeStore(at: directory.path("replayed"))
        let entries = try batched.read { try batched.log.entries(after: 0, in: $0) }
        _ = try replayed.applyReplicated(entries.map { ($0.sequence, $0.encoded) })
        #expect(try Self.differences(replayed, batched).isEmpty, "seed \(generator.seed)")
        let check = try batched.check()
        #expect(check.isHealthy, "seed \(generator.seed): \(check.problems)")
        // Something was indexed, and something removed: the run is not vacuous.
        let contents = try RebuildTests.contents(of: batched)
        #expect(contents["index:Item:title"]?.isEmpty == false)
        #expect((contents["records:Item"]?.count ?? 0) < 60 + fresh.count)
    }

    /// The keys come out in LMDB's order of keys (bytes unsigned, a key before the longer keys it
    /// starts), each index's apart, a key held twice once; and all of them go into the index.
    @Test func heldKeysComeOutInTheIndexOrder() throws {
        let store = try Store(directory: directory.path("order"), options: StoreOptions(), create: true)
        _ = try store.registerEntity(named: "Item", identifierKind: .integer, indexes: [[["title"]], [["score"]]])
        let title = try #require(try store.environment.database(named: "index:Item:title", create: false))
        let score = try #require(try store.environment.database(named: "index:Item:score", create: false))
        var generator = SeededGenerator(label: "deferred-index-order")
        // Few byte values, so that keys share long prefixes and differ past eight bytes.
        let bytes: [UInt8] = [0, 1, 0x7F, 0x80, 0xFF]
        var keys: [(Database, [UInt8])] = []
        for _ in 0..<2_000 {
            var key: [UInt8] = []
            for _ in 0..<Int.random(in: 1...14, using: &generator) {
                key.append(bytes[Int.random(in: 0..<bytes.count, using: &generator)])
            }
            keys.append((Bool.random(using: &generator) ? title : score, key))
        }
        let deferred = DeferredIndexPuts()
        for (database, key) in keys { deferred.hold(key, for: database) }
        #expect(!deferred.isEmpty)
        var drained: [String: [[UInt8]]] = [:]
        deferred.drain { database, key in drained[database.name, default: []].append(Array(key)) }
        #expect(deferred.isEmpty)
        for database in [title, score] {
            let held = Set(keys.filter { $0.0 == database }.map(\.1))
            #expect(
                drained[database.name] == held.sorted { $0.lexicographicallyPrecedes($1) }, "seed \(generator.seed)")
        }
        // Put: every key in the index.
        for (database, key) in keys { deferred.hold(key, for: database) }
        try store.withWriteTransaction { txn in try deferred.flush(in: txn) }
        var stored: [[UInt8]] = []
        try store.withReadTransaction { txn -> Void in
            try txn.forEachEntry(in: title) { key, _ in
                stored.append(Array(key))
                return true
            }
        }
        #expect(stored == drained[title.name])
    }
}
