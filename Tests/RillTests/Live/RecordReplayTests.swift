import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Bounded replays of text queries (`rill watch --from A --to B`) against the results recorded
/// after every commit of a random run: a replay starts from the recorded results at A, and its
/// changes, applied in turn, give the recorded results after each commit that changed them,
/// ending with those at B.
@Suite struct RecordReplayTests {
    typealias Row = RecordLiveQueryTests.Row

    let directory = TemporaryDirectory()

    /// Queries with windows and sorts that the random ones may miss.
    static let fixedQueries = [
        "Gadget sort by stock desc limit 5 offset 3",
        "Gadget where stock > 50 sort by name limit 10",
        "Gadget sort by price",
        "Gadget where active == true offset 4",
        "Gadget sort by maker, stock limit 1",
        "Gadget where stock >= 0 limit 0",
    ]

    @Test func randomReplaysReproduceTheRecordedResults() throws {
        var generator = TextQueryOracleTests.Generator(random: SeededGenerator(label: "record replay oracle"))
        // Unsynced: what is replayed does not depend on the disk, and the run has many commits.
        let container = try ModelContainer(
            for: Gadget.self,
            configurations: ModelConfiguration(
                url: directory.url.appendingPathComponent("store"), durability: .unsynced))
        let store = container.store
        let context = ModelContext(container)
        var queries = try Self.fixedQueries.map { try QueryParser.parse($0) }
        for _ in 0..<OracleScale.value("RILL_REPLAY_QUERIES", default: 6) {
            queries.append(RecordLiveQueryTests.randomQuery(&generator))
        }

        // The results of every query after every commit, each from a fresh run; before the first
        // commit the store is empty.
        var recorded: [[[Row]]] = [queries.map { _ in [] }]
        let idSpace = 120
        for _ in 0..<OracleScale.value("RILL_REPLAY_SAVES", default: 320) {
            let changes =
                Int.random(in: 0..<4, using: &generator.random) == 0
                ? Int.random(in: 2...6, using: &generator.random) : 1
            for _ in 0..<changes {
                let id = Int.random(in: 0..<idSpace, using: &generator.random)
                var gadget = Gadget.random(id: id, using: &generator.random)
                switch Int.random(in: 0..<10, using: &generator.random) {
                case 0..<2: context.delete(gadget)
                case 2..<5:
                    // A change to one field of the stored record.
                    guard var stored = try context.model(Gadget.self, id: id) else { fallthrough }
                    stored.stock = Int.random(in: -5...200, using: &generator.random)
                    context.insert(stored)
                default:
                    gadget.name = generator.pick(["café", "Cafe", "mono", "Zu", gadget.name])
                    context.insert(gadget)
                }
            }
            // A save of deletes of records that do not exist commits nothing.
            guard let sequence = try context.save() else { continue }
            #expect(sequence == UInt64(recorded.count), "one commit per save, numbered from 1")
            // Run unchecked: early on, the records may lack a field a query names (a nil maker
            // is not stored), which the check refuses; the replays below are checked at the head.
            recorded.append(
                try store.read { snapshot in try queries.map { try store.run($0, in: snapshot).map(Row.init) } })
        }
        let head = try store.head()
        #expect(head == UInt64(recorded.count - 1))

        // Random ranges, and the edges: from the empty store, to the head, of one commit, of none.
        var ranges: [(UInt64, UInt64?)] = [(0, nil), (0, head), (head, nil), (head, head), (0, 0), (head - 1, head)]
        for _ in 0..<OracleScale.value("RILL_REPLAY_RANGES", default: 16) {
            let start = UInt64.random(in: 0..<head, using: &generator.random)
            ranges.append((start, UInt64.random(in: (start + 1)...head, using: &generator.random)))
        }
        ranges.append((7, 7))
        var failures = 0
        for (start, end) in ranges {
            for (index, query) in queries.enumerated() {
                let label = "from \(start) to \(end.map(String.init) ?? "the head"): \(query)"
                let replay = try RecordReplay(query, store: store, from: start, to: end)
                let last = end ?? head
                #expect(replay.start == start && replay.end == last, "\(label)")
                if !Self.check(replay, against: recorded.map { $0[index] }, label: label) { failures += 1 }
            }
            if failures > 5 { break }
        }
    }

    /// Whether `replay` reproduces `recorded` (the results after each commit, by sequence):
    /// records an issue for each difference.
    static func check(_ replay: RecordReplay, against recorded: [[Row]], label: String) -> Bool {
        var rows = replay.initial.map(Row.init)
        guard rows == recorded[Int(replay.start)] else {
            Issue.record("\(label): initial results\n\(rows)\n!= recorded\n\(recorded[Int(replay.start)])")
            return false
        }
        var changes = replay.changes[...]
        for sequence in (replay.start + 1)..<(replay.end + 1) {
            let before = rows
            if let change = changes.first, change.sequence == sequence {
                changes.removeFirst()
                if change.isEmpty { Issue.record("\(label): an empty change at \(sequence)") }
                rows = change.apply(to: rows.map { QueryRow(key: $0.key, record: $0.record) }).map(Row.init)
            }
            guard rows == recorded[Int(sequence)] else {
                let told = rows == before ? "no change" : "its change"
                Issue.record(
                    "\(label): after commit \(sequence) (\(told))\n\(rows)\n!= recorded\n\(recorded[Int(sequence)])")
                return false
            }
        }
        guard changes.isEmpty else {
            Issue.record("\(label): changes outside the range or out of order: \(changes.map(\.sequence))")
            return false
        }
        return true
    }

    @Test func aReplayRefusesARangeTheLogDoesNotHold() throws {
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = ModelContext(container)
        for value in 0..<3 {
            context.insert(Counter(id: value, value: value))
            try context.save()
        }
        let store = container.store
        let query = try QueryParser.parse("Counter sort by value desc")
        func message(_ body: () throws -> Void) -> String? {
            do {
                try body()
                return nil
            } catch let error as RillError {
                #expect(error.code == .misuse)
                return error.message
            } catch {
                return "\(error)"
            }
        }
        #expect(
            message { _ = try RecordReplay(query, store: store, from: 2, to: 1) }
                == "cannot replay from commit 2 to commit 1: 2 is after 1")
        #expect(
            message { _ = try RecordReplay(query, store: store, from: 1, to: 4) }
                == "cannot replay to commit 4: the log's last commit is 3")
        #expect(
            message { _ = try RecordReplay(query, store: store, from: 4) }
                == "cannot replay from commit 4: the log's last commit is 3")
        let whole = try RecordReplay(query, store: store, from: 0)
        #expect(whole.initial.isEmpty && whole.end == 3 && whole.changes.map(\.sequence) == [1, 2, 3])
        let none = try RecordReplay(query, store: store, from: 3)
        #expect(
            none.initial.map { QueryEvaluator.read(["value"], from: $0.record) } == [.int(2), .int(1), .int(0)]
                && none.changes.isEmpty)
        // A query that does not fit the entity is refused as a live query would refuse it.
        #expect(throws: RillError.self) {
            _ = try RecordReplay(try QueryParser.parse("Counter where colour == 1"), store: store, from: 0)
        }
    }
}
