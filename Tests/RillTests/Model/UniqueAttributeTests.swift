import Foundation
import RillStorage
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Unique indexes: an insert of values another record has updates that record, or fails the save and
/// writes nothing; an update onto another record's values fails; held to a brute-force model of the rule.
@Suite struct UniqueAttributeTests {
    let directory = TemporaryDirectory()

    struct StrictAccount: PersistentModel, Equatable {
        var id: Int
        var email: String
        var name: String
        static let indexes: [ModelIndex<StrictAccount>] = [.unique(\.email, onConflict: .fail)]
    }

    struct Seat: PersistentModel, Equatable {
        var id: UUID
        var row: String
        var number: Int
        var guest: String
        static let indexes: [ModelIndex<Seat>] = [.unique(\.row, \.number)]
    }

    /// Two unique indexes, one of them on an optional field, for the oracle.
    struct Badge: PersistentModel, Equatable {
        var id: Int
        var code: String?
        var team: Int
        var slot: Int
        var label: Int
        static let indexes: [ModelIndex<Badge>] = [.unique(\.code), .unique(\.team, \.slot)]
    }

    struct StrictBadge: PersistentModel, Equatable {
        var id: Int
        var code: String?
        var team: Int
        var slot: Int
        var label: Int
        static let indexes: [ModelIndex<StrictBadge>] = [
            .unique(\.code, onConflict: .fail), .unique(\.team, \.slot, onConflict: .fail),
        ]
    }

    /// The same entity, with no index, then with a plain one, then with a unique one.
    struct PlainMember: PersistentModel, Equatable {
        static let entityName = "Member"
        var id: Int
        var email: String
    }

    struct IndexedMember: PersistentModel, Equatable {
        static let entityName = "Member"
        static let indexes = [ModelIndex<IndexedMember>(\.email)]
        var id: Int
        var email: String
    }

    struct UniqueMember: PersistentModel, Equatable {
        static let entityName = "Member"
        static let indexes: [ModelIndex<UniqueMember>] = [.unique(\.email)]
        var id: Int
        var email: String
    }

    func container(_ name: String, _ types: [any PersistentModel.Type]) throws -> ModelContainer {
        try ModelContainer(
            for: types, configurations: [ModelConfiguration(url: directory.url.appendingPathComponent(name))])
    }

    // MARK: - Upsert

    @Test func anInsertOfAUniqueValueUpdatesTheRecordThatHasIt() throws {
        let container = try container("upsert", [Account.self])
        let context = container.mainContext
        context.insert(Account(id: 1, email: "ada@example.com", name: "Ada"))
        try context.save()
        context.insert(Account(id: 2, email: "ada@example.com", name: "Ada Lovelace", handle: "ada"))
        let sequence = try #require(try context.save())
        // One record, with the first identifier and the new values; none with the second identifier.
        let expected = Account(id: 1, email: "ada@example.com", name: "Ada Lovelace", handle: "ada")
        #expect(try context.fetch(FetchDescriptor<Account>()) == [expected])
        #expect(try context.model(Account.self, id: 2) == nil)
        #expect(!context.hasChanges)
        // The log and the history show an update of the record that had the value.
        let entry = try #require(try container.store.entries(after: sequence - 1).first)
        #expect(entry.changes.count == 1)
        #expect(entry.changes[0].kind == .update && entry.changes[0].key == 1.storageKey)
        #expect(entry.changes[0].changedFields.sorted() == ["handle", "name"])
        let transaction = try #require(try context.fetchHistory(HistoryDescriptor()).last)
        let change = try #require(transaction.changes(of: Account.self).first)
        #expect(change.kind == .update && change.identifier(as: Int.self) == 1)
        #expect(try change.before(as: Account.self)?.name == "Ada")

        // upsertAndFetch returns the model as stored: with the identifier of the record it updated.
        let stored = try context.upsertAndFetch(Account(id: 3, email: "ada@example.com", name: "Countess"))
        #expect(stored == Account(id: 1, email: "ada@example.com", name: "Countess"))
        // Also when the update changes nothing (no commit), and for a value no record has.
        let head = try container.store.head()
        #expect(try context.upsertAndFetch(Account(id: 4, email: "ada@example.com", name: "Countess")) == stored)
        #expect(try container.store.head() == head)
        let other = Account(id: 5, email: "byron@example.com", name: "Byron")
        #expect(try context.upsertAndFetch(other) == other)
        #expect(try context.fetchCount(FetchDescriptor<Account>()) == 2)
        // fetchOrInsert of a default whose unique value is taken returns the record that has it.
        let found = try context.fetchOrInsert(Account.self, id: 9) {
            Account(id: 9, email: "byron@example.com", name: "B")
        }
        #expect(found.id == 5 && found.name == "B")
        #expect(try container.store.check().problems.isEmpty)
    }

    @Test func compoundUniqueValuesAreUniqueTogether() throws {
        let container = try container("compound", [Seat.self])
        let context = container.mainContext
        let (a, b, c) = (UUID(), UUID(), UUID())
        context.insert(Seat(id: a, row: "A", number: 1, guest: "Ann"))
        context.insert(Seat(id: b, row: "A", number: 2, guest: "Bob"))
        context.insert(Seat(id: c, row: "B", number: 1, guest: "Cid"))
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Seat>()) == 3, "each value alone may repeat")
        context.insert(Seat(id: UUID(), row: "A", number: 2, guest: "Dee"))
        try context.save()
        let seats = try context.fetch(FetchDescriptor<Seat>(sortBy: [SortDescriptor(\.guest)]))
        #expect(seats.map(\.guest) == ["Ann", "Cid", "Dee"])
        #expect(try context.model(Seat.self, id: b)?.guest == "Dee")
        // Moving a seat onto another's row and number fails, and writes nothing.
        let head = try container.store.head()
        context.insert(Seat(id: c, row: "A", number: 1, guest: "Cid"))
        let error = #expect(throws: RillError.self) { try context.save() }
        #expect(error?.code == .uniqueConflict)
        #expect(error?.uniqueConflict?.fields == ["row", "number"])
        #expect(error?.uniqueConflict?.values == [#""A""#, "1"])
        #expect(error?.uniqueConflict?.identifier == c.uuidString)
        #expect(error?.uniqueConflict?.existingIdentifier == a.uuidString)
        #expect(try container.store.head() == head)
    }

    @Test func strictModeFailsTheWholeSaveAndWritesNothing() throws {
        let container = try container("strict", [StrictAccount.self])
        let context = container.mainContext
        context.insert(StrictAccount(id: 1, email: "ada@example.com", name: "Ada"))
        try context.save()
        let transaction = container.store.environment.lastTransactionID
        let head = try container.store.head()
        context.insert(StrictAccount(id: 7, email: "new@example.com", name: "New"))
        context.insert(StrictAccount(id: 2, email: "ada@example.com", name: "Other"))
        let error = #expect(throws: RillError.self) { try context.save() }
        #expect(error?.code == .uniqueConflict)
        let conflict = try #require(error?.uniqueConflict)
        #expect(
            conflict
                == UniqueConflict(
                    entity: "StrictAccount", fields: ["email"], values: [#""ada@example.com""#], identifier: "2",
                    existingIdentifier: "1"))
        #expect(error?.message.contains("StrictAccount 1 already has email = \"ada@example.com\"") == true)
        // Nothing of the save is written: not even the change before the conflicting one.
        #expect(container.store.environment.lastTransactionID == transaction)
        #expect(try container.store.head() == head)
        #expect(try context.fetchCount(FetchDescriptor<StrictAccount>()) == 3, "the staged changes stay staged")
        context.rollback()
        #expect(try context.fetch(FetchDescriptor<StrictAccount>()).map(\.id) == [1])
        // upsertAndFetch fails the same way.
        #expect(throws: RillError.self) {
            _ = try context.upsertAndFetch(StrictAccount(id: 3, email: "ada@example.com", name: "Third"))
        }
        #expect(container.store.environment.lastTransactionID == transaction)
    }

    @Test func anUpdateOntoAnotherRecordsValueFailsInBothModes() throws {
        let container = try container("update", [Account.self])
        let context = container.mainContext
        context.insert(Account(id: 1, email: "a@example.com", name: "A"))
        context.insert(Account(id: 2, email: "b@example.com", name: "B"))
        try context.save()
        let head = try container.store.head()
        context.insert(Account(id: 2, email: "a@example.com", name: "B"))
        let error = #expect(throws: RillError.self) { try context.save() }
        #expect(error?.code == .uniqueConflict)
        #expect(error?.uniqueConflict?.identifier == "2" && error?.uniqueConflict?.existingIdentifier == "1")
        #expect(error?.message.contains("Account 2 cannot take email = \"a@example.com\"") == true)
        #expect(try container.store.head() == head)
        context.rollback()
        // A record keeping its own value is no conflict.
        context.insert(Account(id: 2, email: "b@example.com", name: "Bea"))
        #expect(try context.save() != nil)
    }

    @Test func twoInsertsOfOneValueInOneSaveLeaveTheFirstIdentifierWithTheSecondsValues() throws {
        let container = try container("same-save", [Account.self, StrictAccount.self])
        let context = container.mainContext
        context.insert(Account(id: 1, email: "x@example.com", name: "first"))
        context.insert(Account(id: 2, email: "x@example.com", name: "second"))
        try context.save()
        #expect(
            try context.fetch(FetchDescriptor<Account>()) == [Account(id: 1, email: "x@example.com", name: "second")])
        let changes = try #require(try container.store.entries(after: 0).last).changes
        #expect(changes.map(\.kind) == [.insert, .update] && changes.allSatisfy { $0.key == 1.storageKey })

        context.insert(StrictAccount(id: 1, email: "x@example.com", name: "first"))
        context.insert(StrictAccount(id: 2, email: "x@example.com", name: "second"))
        let error = #expect(throws: RillError.self) { try context.save() }
        #expect(error?.uniqueConflict?.identifier == "2" && error?.uniqueConflict?.existingIdentifier == "1")
        #expect(try container.store.entity(named: "StrictAccount").map { try container.store.recordCount(of: $0) } == 0)
    }

    @Test func nilValuesAndLongValuesAreComparedAsTheyAre() throws {
        let container = try container("nil-long", [Badge.self])
        let context = container.mainContext
        // Records without a code are not held to the code's index.
        context.insert(Badge(id: 1, code: nil, team: 1, slot: 1, label: 0))
        context.insert(Badge(id: 2, code: nil, team: 1, slot: 2, label: 0))
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Badge>()) == 2)
        // Values longer than an index key keeps share its prefix: only equal ones conflict.
        let long = String(repeating: "x", count: 600)
        context.insert(Badge(id: 3, code: long + "a", team: 2, slot: 1, label: 0))
        context.insert(Badge(id: 4, code: long + "b", team: 2, slot: 2, label: 0))
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Badge>()) == 4)
        context.insert(Badge(id: 5, code: long + "b", team: 3, slot: 1, label: 9))
        try context.save()
        #expect(try context.model(Badge.self, id: 4) == Badge(id: 4, code: long + "b", team: 3, slot: 1, label: 9))
        #expect(try context.model(Badge.self, id: 5) == nil)
        // One insert matching two different records fails.
        context.insert(Badge(id: 6, code: long + "a", team: 1, slot: 1, label: 0))
        let error = #expect(throws: RillError.self) { try context.save() }
        #expect(error?.code == .uniqueConflict)
        #expect(error?.message.contains("Badge 6 would have the code") == true)
    }

    struct Reading: PersistentModel, Equatable {
        var id: Int
        var value: Double
        var gauge: Float
        static let indexes: [ModelIndex<Reading>] = [.unique(\.value, onConflict: .fail), .unique(\.gauge)]
    }

    @Test func nanValuesAreHeldToNothingAsSwiftsEqualityFindsThemEqualToNothing() throws {
        #expect(Double.nan != Double.nan && Float.nan != Float.nan && -0.0 == 0.0)
        let url = directory.url.appendingPathComponent("nan")
        do {
            let container = try ModelContainer(for: Reading.self, configurations: ModelConfiguration(url: url))
            let context = container.mainContext
            context.insert(Reading(id: 1, value: .nan, gauge: .nan))
            context.insert(Reading(id: 2, value: .nan, gauge: .nan))
            try context.save()
            #expect(try context.fetchCount(FetchDescriptor<Reading>()) == 2)
            // Equal values still conflict: -0.0 == 0.0.
            context.insert(Reading(id: 3, value: 0, gauge: 1))
            context.insert(Reading(id: 4, value: -0.0, gauge: 2))
            let error = #expect(throws: RillError.self) { try context.save() }
            #expect(error?.code == .uniqueConflict)
            context.rollback()
        }
        // Opening the store again checks the indexes over the stored records: the NaNs break nothing.
        let container = try ModelContainer(for: Reading.self, configurations: ModelConfiguration(url: url))
        #expect(try container.store.check().isHealthy)
    }

    final class Inbox: @unchecked Sendable {
        // Guarded by the observer's queue.
        var changes: [ResultsChange<Account>] = []
    }

    @Test func aLiveQuerySeesAnUpsertAsAnUpdateOfTheRecordThatHadTheValue() throws {
        let container = try container("live", [Account.self])
        let context = container.mainContext
        context.insert(Account(id: 1, email: "a@example.com", name: "A"))
        context.insert(Account(id: 2, email: "b@example.com", name: "B"))
        try context.save()
        let query = try LiveQuery(FetchDescriptor<Account>(sortBy: [SortDescriptor(\.name)]), in: container)
        let queue = DispatchQueue(label: "observer")
        let inbox = Inbox()
        let observation = query.observe(on: queue) { inbox.changes.append($0) }
        defer { observation.cancel() }
        var previous = Array(query)

        context.insert(Account(id: 7, email: "a@example.com", name: "Alice"))
        try context.save()
        // Two inserts of one value in a save: one record, one change.
        context.insert(Account(id: 8, email: "c@example.com", name: "C"))
        context.insert(Account(id: 9, email: "c@example.com", name: "Cy"))
        try context.save()
        try query.catchUp()
        queue.sync {}
        #expect(inbox.changes.count == 2)
        let first = try #require(inbox.changes.first)
        #expect(first.insertions.isEmpty && first.removals.isEmpty && first.updates.map(\.element.id) == [1])
        for change in inbox.changes { previous = change.apply(to: previous) }
        let fetched = try context.fetch(FetchDescriptor<Account>(sortBy: [SortDescriptor(\.name)]))
        #expect(previous == fetched && Array(query) == fetched)
        #expect(fetched.map(\.id) == [1, 2, 8] && fetched.map(\.name) == ["Alice", "B", "Cy"])
    }

    // MARK: - Building a unique index

    @Test func makingAnIndexUniqueOverConflictingRecordsFailsAndWritesNothing() throws {
        let url = directory.url.appendingPathComponent("build")
        let configuration = ModelConfiguration(url: url)
        do {
            let context = try ModelContainer(for: PlainMember.self, configurations: configuration).mainContext
            for (id, email) in [(1, "a"), (2, "b"), (3, "a")] { context.insert(PlainMember(id: id, email: email)) }
            try context.save()
        }
        func transaction() throws -> Int { try Environment(directory: url.path).lastTransactionID }
        // A new unique index: built, found to conflict, and not kept.
        let before = try transaction()
        let built = #expect(throws: RillError.self) {
            _ = try ModelContainer(for: UniqueMember.self, configurations: configuration)
        }
        #expect(built?.code == .uniqueConflict)
        #expect(
            built?.uniqueConflict
                == UniqueConflict(
                    entity: "Member", fields: ["email"], values: [#""a""#], identifier: "3", existingIdentifier: "1"))
        #expect(
            built?.message.contains("Member(email) cannot be unique: Member 3 and Member 1 both have email") == true)
        #expect(try transaction() == before)
        // A plain index made unique later is checked the same way, and stays plain.
        let indexed = try ModelContainer(for: IndexedMember.self, configurations: configuration)
        #expect(try indexed.store.entity(named: "Member")?.indexes.map(\.uniqueness) == [nil])
        let plain = try transaction()
        #expect(throws: RillError.self) {
            _ = try ModelContainer(for: UniqueMember.self, configurations: configuration)
        }
        #expect(try transaction() == plain)
        // Once the records no longer conflict, the index becomes unique, and a model declaring it
        // plain again makes it plain.
        indexed.mainContext.delete(IndexedMember(id: 3, email: "a"))
        try indexed.mainContext.save()
        let unique = try ModelContainer(for: UniqueMember.self, configurations: configuration)
        #expect(try unique.store.entity(named: "Member")?.indexes.map(\.uniqueness) == [.upsert])
        unique.mainContext.insert(UniqueMember(id: 4, email: "b"))
        try unique.mainContext.save()
        #expect(try unique.mainContext.fetch(FetchDescriptor<UniqueMember>()).map(\.id) == [1, 2])
        let again = try ModelContainer(for: IndexedMember.self, configurations: configuration)
        again.mainContext.insert(IndexedMember(id: 5, email: "b"))
        try again.mainContext.save()
        #expect(try again.mainContext.fetch(FetchDescriptor<IndexedMember>()).map(\.id) == [1, 2, 5])
        #expect(try again.store.entity(named: "Member")?.indexes.map(\.uniqueness) == [nil])
    }

    @Test func checkFindsAUniqueIndexThatRecordsBreak() throws {
        let url = directory.url.appendingPathComponent("check")
        do {
            let container = try ModelContainer(for: IndexedMember.self, configurations: ModelConfiguration(url: url))
            for (id, email) in [(1, "a"), (2, "b"), (3, "a")] {
                container.mainContext.insert(IndexedMember(id: id, email: email))
            }
            try container.mainContext.save()
            // As a writer that ignored the constraint would leave it: the catalog says unique, the records do not.
            let (store, meta) = (container.store, container.store.meta)
            try store.environment.write { txn in
                try txn.put(
                    IndexStorage.catalogValue(uniqueness: .upsert), for: Array("index:Member:email".utf8), in: meta)
            }
        }
        let store = try Store(directory: url.path, options: StoreOptions(readOnly: true), create: false)
        #expect(
            try store.check().problems == [
                "the unique index Member(email) is broken: Member 3 and Member 1 both have email = \"a\""
            ])
    }

    @Test func theSchemaAndTheCatalogRecordTheConstraints() throws {
        let container = try container("schema", [Badge.self, StrictAccount.self])
        let badge = try #require(try container.store.schema(of: "Badge"))
        #expect(badge.unique == ["code": .upsert, "team,slot": .upsert])
        #expect(try container.store.schema(of: "StrictAccount")?.unique == ["email": .fail])
        let entity = try #require(try container.store.entity(named: "StrictAccount"))
        #expect(entity.hasUniqueIndexes && entity.indexes.map(\.uniqueness) == [.fail])
        #expect(badge.jsonValue.jsonString().hasSuffix(#""unique":{"code":"upsert","team,slot":"upsert"}}"#))
    }

    // MARK: - Oracle

    /// What the rule says a save does to `state` (identifier → record): the records after it, or nil when it fails.
    static func expected(
        _ state: [Int: Badge], after changes: [(id: Int, badge: Badge?)], strict: Bool
    ) -> (records: [Int: Badge], upserts: Int)? {
        var next = state
        var upserts = 0
        for change in changes {
            guard let badge = change.badge else {
                next[change.id] = nil
                continue
            }
            let owners = Set(
                next.values.filter { other in
                    other.id != badge.id
                        && ((badge.code != nil && other.code == badge.code)
                            || (other.team == badge.team && other.slot == badge.slot))
                }.map(\.id))
            guard let owner = owners.first else {
                next[badge.id] = badge
                continue
            }
            if owners.count > 1 || next[badge.id] != nil || strict { return nil }
            var moved = badge
            moved.id = owner
            next[owner] = moved
            upserts += 1
        }
        return (next, upserts)
    }

    @Test(arguments: [false, true]) func randomSavesFollowTheRule(strict: Bool) throws {
        var random = SeededGenerator(label: "unique oracle, strict \(strict)")
        let container = try container("oracle", [Badge.self, StrictBadge.self])
        let context = ModelContext(container)
        var state: [Int: Badge] = [:]
        var (upserts, failures) = (0, 0)
        for round in 0..<400 {
            // Distinct identifiers in one save, so that its changes apply in the order staged.
            let ids = Array((0..<10).shuffled(using: &random).prefix(Int.random(in: 1...3, using: &random)))
            var changes: [(id: Int, badge: Badge?)] = []
            for id in ids {
                if Int.random(in: 0..<5, using: &random) == 0 {
                    changes.append((id, nil))
                } else {
                    let code =
                        Int.random(in: 0..<4, using: &random) == 0 ? nil : "c\(Int.random(in: 0..<6, using: &random))"
                    changes.append(
                        (
                            id,
                            Badge(
                                id: id, code: code, team: Int.random(in: 0..<3, using: &random),
                                slot: Int.random(in: 0..<3, using: &random),
                                label: Int.random(in: 0..<3, using: &random))
                        ))
                }
            }
            for change in changes {
                switch (change.badge, strict) {
                case (let badge?, false): context.insert(badge)
                case (let badge?, true):
                    context.insert(
                        StrictBadge(
                            id: badge.id, code: badge.code, team: badge.team, slot: badge.slot, label: badge.label))
                case (nil, false): context.delete(Badge(id: change.id, code: nil, team: 0, slot: 0, label: 0))
                case (nil, true): context.delete(StrictBadge(id: change.id, code: nil, team: 0, slot: 0, label: 0))
                }
            }
            let oracle = Self.expected(state, after: changes, strict: strict)
            let head = try container.store.head()
            do {
                let sequence = try context.save()
                let next = try #require(oracle, "round \(round): the save should have failed: \(changes)")
                // No commit when nothing changed; a commit may still leave the records as they were, when
                // its changes undo one another (one upsert after another onto the same record).
                if sequence == nil { #expect(next.records == state, "round \(round): \(changes)") }
                upserts += next.upserts
                state = next.records
            } catch let error as RillError {
                #expect(oracle == nil, "round \(round): \(error)")
                #expect(error.code == .uniqueConflict, "round \(round): \(error)")
                #expect(try container.store.head() == head)
                context.rollback()
                failures += 1
            }
            let stored: [Badge] =
                strict
                ? try context.fetch(FetchDescriptor<StrictBadge>(sortBy: [SortDescriptor(\.id)])).map {
                    Badge(id: $0.id, code: $0.code, team: $0.team, slot: $0.slot, label: $0.label)
                }
                : try context.fetch(FetchDescriptor<Badge>(sortBy: [SortDescriptor(\.id)]))
            #expect(stored == state.values.sorted { $0.id < $1.id }, "round \(round): \(changes)")
            if stored != state.values.sorted(by: { $0.id < $1.id }) { break }
        }
        #expect(failures > 10, "the rounds should include conflicts")
        if !strict { #expect(upserts > 10, "the rounds should include upserts") }
        #expect(try container.store.check().problems.isEmpty)
    }

    // MARK: - Two processes

    @Test func anUpsertByAUniqueKeyFromTwoProcessesAtOnceLeavesOneRecord() throws {
        let helper = buildProductsDirectory.appendingPathComponent("rill-test-helper")
        for round in 0..<8 {
            let path = directory.path("race-\(round)")
            // The store and its unique index exist first, so that the race is the saves' alone.
            _ = try ModelContainer(
                for: Account.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
            var processes: [(Process, Pipe)] = []
            for (id, name) in [(100 + round, "first"), (200 + round, "second")] {
                let process = Process()
                process.executableURL = helper
                process.arguments = ["unique-upsert", path, "\(id)", name]
                let output = Pipe()
                process.standardOutput = output
                try process.run()
                processes.append((process, output))
            }
            _ = FileManager.default.createFile(atPath: path + ".go", contents: Data())
            var printed: [String] = []
            for (process, output) in processes {
                process.waitUntilExit()
                #expect(process.terminationStatus == 0)
                printed.append(
                    String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                        .trimmingCharacters(in: .whitespacesAndNewlines))
            }
            let container = try ModelContainer(
                for: Account.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
            let accounts = try container.mainContext.fetch(FetchDescriptor<Account>())
            #expect(accounts.count == 1, "round \(round): \(accounts)")
            let stored = try #require(accounts.first)
            // The one that saved first inserted; the other updated its record: one insert, one update.
            #expect(try container.store.head() == 2, "round \(round)")
            #expect(printed.map { $0.split(separator: " ")[0] } == ["\(stored.id)", "\(stored.id)"], "\(printed)")
            #expect(printed.contains("\(stored.id) \(stored.name)"), "\(printed)")
        }
    }
}
