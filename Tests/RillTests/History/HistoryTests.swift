import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// `fetchHistory` held to a record of what each save did: every transaction's author and
/// changes, each change's values before and after and its changed fields; every descriptor's
/// answer to a brute-force filter of the whole history; and `historyUpdates` to the commits
/// made while it runs.
@Suite struct HistoryTests {
    let directory = TemporaryDirectory()

    var url: URL { directory.url.appendingPathComponent("store") }

    /// A second entity, with string identifiers and an optional field that comes and goes.
    struct Note: PersistentModel, Equatable {
        var id: String
        var text: String
        var pinned: Bool?
    }

    /// What one save did, as the test made it.
    struct Expected {
        struct Change {
            var kind: HistoryChange.Kind
            var entity: String
            var id: String
            var before: Any?
            var after: Any?
        }
        var sequence: UInt64
        var author: String?
        var changes: [Change]
    }

    /// Random saves of gadgets and notes, each change of a distinct record: inserts, updates of
    /// a few fields, deletes; authors nil, alice or bob.
    static func randomRun(
        _ context: ModelContext, saves: Int, random: inout SeededGenerator
    ) throws -> [Expected] {
        var gadgets: [Int: Gadget] = [:]
        var notes: [String: Note] = [:]
        var expected: [Expected] = []
        for _ in 0..<saves {
            let author = [nil, "alice", "bob"].randomElement(using: &random)!
            context.author = author
            var changes: [Expected.Change] = []
            var touched: Set<String> = []
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                if Bool.random(using: &random) {
                    let id = Int.random(in: 0..<30, using: &random)
                    guard touched.insert("g\(id)").inserted else { continue }
                    let old = gadgets[id]
                    if let old, Int.random(in: 0..<3, using: &random) == 0 {
                        context.delete(old)
                        gadgets[id] = nil
                        changes.append(.init(kind: .delete, entity: "Gadget", id: "\(id)", before: old, after: nil))
                    } else {
                        var new = Gadget.random(id: id, using: &random)
                        if var changed = old {
                            // An update of one or two fields, so that changed fields are few.
                            changed.stock = new.stock
                            if Bool.random(using: &random) { changed.maker = new.maker }
                            new = changed
                            if new == old { continue }
                        }
                        context.insert(new)
                        gadgets[id] = new
                        changes.append(
                            .init(
                                kind: old == nil ? .insert : .update, entity: "Gadget", id: "\(id)", before: old,
                                after: new))
                    }
                } else {
                    let id = "n\(Int.random(in: 0..<20, using: &random))"
                    guard touched.insert(id).inserted else { continue }
                    let old = notes[id]
                    if let old, Int.random(in: 0..<3, using: &random) == 0 {
                        context.delete(old)
                        notes[id] = nil
                        changes.append(.init(kind: .delete, entity: "Note", id: id, before: old, after: nil))
                    } else {
                        let new = Note(
                            id: id, text: ["a", "b", "ç"].randomElement(using: &random)!,
                            pinned: [nil, true, false].randomElement(using: &random)!)
                        if new == old { continue }
                        context.insert(new)
                        notes[id] = new
                        changes.append(
                            .init(kind: old == nil ? .insert : .update, entity: "Note", id: id, before: old, after: new)
                        )
                    }
                }
            }
            guard let sequence = try context.save() else {
                #expect(changes.isEmpty)
                continue
            }
            expected.append(Expected(sequence: sequence, author: author, changes: changes))
        }
        return expected
    }

    /// Whether `change` carries the values of `expected`, typed.
    static func matches(_ change: HistoryChange, _ expected: Expected.Change) throws -> Bool {
        guard change.kind == expected.kind, change.entityName == expected.entity,
            change.identifierDescription == expected.id
        else { return false }
        switch expected.entity {
        case "Gadget":
            guard try change.before(as: Gadget.self) == expected.before as? Gadget,
                try change.after(as: Gadget.self) == expected.after as? Gadget,
                change.identifier(as: Int.self) == Int(expected.id)
            else { return false }
            if let before = expected.before as? Gadget, let after = expected.after as? Gadget {
                var fields: [String] = []
                if before.stock != after.stock { fields.append("stock") }
                if before.maker != after.maker { fields.append("maker") }
                return Set(change.changedFields) == Set(fields)
            }
        default:
            guard try change.before(as: Note.self) == expected.before as? Note,
                try change.after(as: Note.self) == expected.after as? Note,
                change.identifier(as: String.self) == expected.id
            else { return false }
            if let before = expected.before as? Note, let after = expected.after as? Note {
                var fields: [String] = []
                if before.text != after.text { fields.append("text") }
                if before.pinned != after.pinned { fields.append("pinned") }
                return Set(change.changedFields) == Set(fields)
            }
        }
        return change.changedFields.isEmpty
    }

    @Test func everyTransactionCarriesItsAuthorAndTheValuesBeforeAndAfter() throws {
        var random = SeededGenerator(label: "history values")
        let container = try ModelContainer(for: Gadget.self, Note.self, configurations: ModelConfiguration(url: url))
        let context = container.mainContext
        let expected = try Self.randomRun(context, saves: 500, random: &random)
        let history = try context.fetchHistory(HistoryDescriptor())
        #expect(history.map(\.sequence) == expected.map(\.sequence))
        for (transaction, made) in zip(history, expected) {
            #expect(transaction.author == made.author)
            #expect(transaction.token == HistoryToken(sequence: made.sequence))
            // A save's changes come in the store's order; compare them as sets of records.
            #expect(transaction.changes.count == made.changes.count, "commit \(made.sequence)")
            for change in transaction.changes {
                let match = made.changes.first {
                    $0.entity == change.entityName && $0.id == change.identifierDescription
                }
                #expect(
                    try match.map { try Self.matches(change, $0) } == true,
                    "commit \(made.sequence): \(change.kind) \(change.entityName) \(change.identifierDescription), seed \(random.seed)"
                )
            }
        }
        let kinds = Set(history.flatMap(\.changes).map(\.kind))
        #expect(kinds == Set(HistoryChange.Kind.allCases))
        // Timestamps never decrease along the log.
        #expect(zip(history, history.dropFirst()).allSatisfy { $0.timestamp <= $1.timestamp })
        #expect(try context.currentHistoryToken() == history.last?.token)
    }

    @Test func everyDescriptorSelectsWhatABruteForceFilterSelects() throws {
        var random = SeededGenerator(label: "history descriptors")
        let container = try ModelContainer(for: Gadget.self, Note.self, configurations: ModelConfiguration(url: url))
        let context = container.mainContext
        _ = try Self.randomRun(context, saves: 300, random: &random)
        let all = try context.fetchHistory(HistoryDescriptor())
        let head = all.last!.sequence
        for round in 0..<300 {
            var descriptor = HistoryDescriptor()
            if Bool.random(using: &random) {
                descriptor.after = HistoryToken(sequence: .random(in: 0...head, using: &random))
            }
            if Bool.random(using: &random) {
                descriptor.through = HistoryToken(sequence: .random(in: 0...head + 3, using: &random))
            }
            // Dates at, between and beyond commits.
            func date() -> Date {
                let base = all.randomElement(using: &random)!.timestamp
                return base.addingTimeInterval([0, -0.000_1, 0.000_1, -5, 5].randomElement(using: &random)!)
            }
            if Int.random(in: 0..<3, using: &random) == 0 { descriptor.since = date() }
            if Int.random(in: 0..<3, using: &random) == 0 { descriptor.until = date() }
            if Int.random(in: 0..<3, using: &random) == 0 {
                descriptor.entityNames = Set(
                    [["Gadget"], ["Note"], ["Gadget", "Note"], []].randomElement(using: &random)!)
            }
            if Int.random(in: 0..<3, using: &random) == 0 {
                descriptor.authors = Set([["alice"], ["bob"], ["alice", "bob"], []].randomElement(using: &random)!)
            }
            if Bool.random(using: &random) { descriptor.fetchLimit = .random(in: 0...20, using: &random) }
            if Bool.random(using: &random) { descriptor.sortOrder = .reverse }
            if round == 0 { descriptor.include(Note.self) }

            var brute = all.filter { transaction in
                if let after = descriptor.after, transaction.sequence <= after.sequence { return false }
                if let through = descriptor.through, transaction.sequence > through.sequence { return false }
                if let since = descriptor.since, transaction.timestamp < since { return false }
                if let until = descriptor.until, transaction.timestamp > until { return false }
                if let authors = descriptor.authors, !(transaction.author.map(authors.contains) ?? false) {
                    return false
                }
                if let entities = descriptor.entityNames,
                    !transaction.changes.contains(where: { entities.contains($0.entityName) })
                {
                    return false
                }
                return true
            }
            if descriptor.sortOrder == .reverse { brute.reverse() }
            if let limit = descriptor.fetchLimit { brute = Array(brute.prefix(limit)) }
            let fetched = try context.fetchHistory(descriptor)
            #expect(
                fetched.map(\.sequence) == brute.map(\.sequence), "round \(round): \(descriptor), seed \(random.seed)")
            for (got, whole) in zip(fetched, brute) {
                let kept = whole.changes.filter { descriptor.entityNames?.contains($0.entityName) ?? true }
                #expect(got.changes.map(\.identifierDescription) == kept.map(\.identifierDescription))
            }
        }
        let error = #expect(throws: RillError.self) {
            try context.fetchHistory(HistoryDescriptor(after: HistoryToken(sequence: head + 1)))
        }
        #expect(error?.code == .misuse && error?.message.contains("last commit is \(head)") == true)
        // A misspelled entity is an error naming the closest one, not an empty history.
        let misspelled = #expect(throws: RillError.self) {
            try context.fetchHistory(HistoryDescriptor(entityNames: ["Gadget", "Notes"]))
        }
        #expect(misspelled?.code == .unknownEntity && misspelled?.message.contains("did you mean Note?") == true)
    }

    @Test func followingAMisspelledEntityFailsAtOnce() async throws {
        let container = try ModelContainer(for: Gadget.self, Note.self, configurations: ModelConfiguration(url: url))
        let updates = container.mainContext.historyUpdates(matching: HistoryDescriptor(entityNames: ["Gadgets"]))
        var iterator = updates.makeAsyncIterator()
        let error = await #expect(throws: RillError.self) { _ = try await iterator.next() }
        #expect(error?.code == .unknownEntity && error?.message.contains("did you mean Gadget?") == true)
    }

    /// Each read of the log bounded by `limit` transactions; a bound below one reads one at a time.
    @Test(arguments: [3, 0, -2])
    func historyUpdatesDeliverWhatIsRecordedThenEachNewCommit(limit: Int) async throws {
        var random = SeededGenerator(label: "history updates")
        let container = try ModelContainer(for: Gadget.self, Note.self, configurations: ModelConfiguration(url: url))
        let context = container.mainContext
        _ = try Self.randomRun(context, saves: 40, random: &random)
        let start = HistoryToken(sequence: 25)
        var descriptor = HistoryDescriptor()
        descriptor.include(Gadget.self)
        descriptor.fetchLimit = limit
        let updates = context.historyUpdates(after: start, matching: descriptor)
        let reader = Task {
            var seen: [HistoryTransaction] = []
            for try await transaction in updates {
                seen.append(transaction)
                if transaction.changes.contains(where: { $0.identifierDescription == "999" }) { break }
            }
            return seen
        }
        // Saves made while the reader waits, from another context, ending with gadget 999.
        // (Records of their own: the writer knows nothing of what the first run stored.)
        let writer = ModelContext(container)
        var more = random
        for round in 0..<30 {
            if round % 3 == 0 {
                writer.insert(Note(id: "w\(round)", text: "w", pinned: nil))
            } else {
                writer.insert(Gadget.random(id: 500 + round, using: &more))
            }
            try writer.save()
        }
        writer.insert(Gadget.random(id: 999, using: &more))
        try writer.save()
        let seen = try await reader.value
        var expected = try context.fetchHistory(HistoryDescriptor(after: start))
        expected = expected.filter { $0.changes.contains { $0.entityName == "Gadget" } }
        #expect(seen.map(\.sequence) == expected.map(\.sequence), "seed \(random.seed)")
        #expect(seen.allSatisfy { $0.changes.allSatisfy { $0.entityName == "Gadget" } })

        // Cancelled while it waits, an iteration ends.
        let waiting = Task {
            var count = 0
            for try await _ in context.historyUpdates(after: try context.currentHistoryToken()) { count += 1 }
            return count
        }
        try await Task.sleep(for: .milliseconds(100))
        waiting.cancel()
        #expect(try await waiting.value == 0)
    }
}
