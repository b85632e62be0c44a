import Dispatch
import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// The past against a record of it: a random run of 2,000 saves records the store's state after
/// each one, and so the results of 50 queries (predicates, sorts, windows) after each, by brute
/// force in Swift. Afterwards every as-of fetch (by token and by date, typed and as text) equals
/// the recorded results at its commit; every resume from a commit tells its first observer of one
/// change that turns the recorded results then into the current ones; every replay of a range
/// reproduces the recorded results after each commit in it; and every history change's values
/// equal the recorded records on either side of its commit.
@Suite struct TimeTravelOracleTests {
    let directory = TemporaryDirectory()

    /// The changes told to an observer, on its queue.
    final class Received: @unchecked Sendable {
        // Written on the observer's queue, read after draining it.
        var changes: [ResultsChange<Gadget>] = []
    }

    /// A query of the run: the descriptor, its brute-force twin, and a description.
    struct Case {
        var descriptor: FetchDescriptor<Gadget>
        var check: @Sendable (Gadget) -> Bool
        var sort: [SortDescriptor<Gadget>]
        var text: String

        func expected(_ state: [Int: Gadget]) -> [Gadget] {
            LiveQueryOracleTests.expected(
                state, check, sort, limit: descriptor.fetchLimit, offset: descriptor.fetchOffset)
        }
    }

    /// The run: states[n] is the store after commit n (states[0] the empty store).
    struct Run {
        var container: ModelContainer
        var states: [[Int: Gadget]]
        var cases: [Case]
    }

    static func makeRun(at url: URL, saves: Int, random: inout SeededGenerator) throws -> Run {
        let container = try ModelContainer(
            for: Gadget.self, configurations: ModelConfiguration(url: url, durability: .unsynced))
        let context = container.mainContext
        var state: [Int: Gadget] = [:]
        var states: [[Int: Gadget]] = [state]
        for _ in 0..<saves {
            var touched: Set<Int> = []
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let id = Int.random(in: 0..<120, using: &random)
                guard touched.insert(id).inserted else { continue }
                if let old = state[id], Int.random(in: 0..<4, using: &random) == 0 {
                    context.delete(old)
                    state[id] = nil
                } else if var gadget = state[id], Bool.random(using: &random) {
                    // An update of a field or two, some of them sort keys.
                    let other = Gadget.random(id: id, using: &random)
                    gadget.stock = other.stock
                    if Bool.random(using: &random) { gadget.price = other.price }
                    if Bool.random(using: &random) { gadget.rating = other.rating }
                    context.insert(gadget)
                    state[id] = gadget
                } else {
                    let gadget = Gadget.random(id: id, using: &random)
                    context.insert(gadget)
                    state[id] = gadget
                }
            }
            guard let sequence = try context.save() else { continue }
            #expect(sequence == UInt64(states.count))
            states.append(state)
        }
        let cases = (0..<50).map { _ in
            let (descriptor, check, sort, text) = LiveQueryOracleTests.randomDescriptor(&random)
            return Case(descriptor: descriptor, check: check, sort: sort, text: text)
        }
        return Run(container: container, states: states, cases: cases)
    }

    @Test func asOfFetchesAndHistoryEqualTheRecordedPast() throws {
        var random = SeededGenerator(label: "time travel")
        let run = try Self.makeRun(at: directory.url.appendingPathComponent("store"), saves: 2_000, random: &random)
        let context = run.container.mainContext
        let head = UInt64(run.states.count - 1)
        #expect(head > 1_900)

        // Every query at the ends and the middle, then random commits and queries.
        var checks: [(UInt64, Int)] = []
        for sequence: UInt64 in [0, 1, head / 2, head - 1, head] { checks += run.cases.indices.map { (sequence, $0) } }
        for _ in 0..<600 {
            checks.append((.random(in: 0...head, using: &random), .random(in: run.cases.indices, using: &random)))
        }
        for (sequence, index) in checks {
            let query = run.cases[index]
            let expected = query.expected(run.states[Int(sequence)])
            let fetched = try context.fetch(query.descriptor, asOf: HistoryToken(sequence: sequence))
            #expect(fetched == expected, "as of \(sequence): \(query.text), seed \(random.seed)")
        }

        // By date: the last commit made at or before it, found in the history.
        let history = try context.fetchHistory(HistoryDescriptor())
        #expect(history.count == Int(head))
        for _ in 0..<100 {
            let commit = history.randomElement(using: &random)!
            let date = commit.timestamp.addingTimeInterval([0, 0.000_001, -0.000_001].randomElement(using: &random)!)
            let sequence = history.last { $0.timestamp <= date }?.sequence ?? 0
            let query = run.cases.randomElement(using: &random)!
            #expect(
                try context.fetch(query.descriptor, asOf: date) == query.expected(run.states[Int(sequence)]),
                "as of \(date) (commit \(sequence)): \(query.text)")
        }
        let before = try context.fetch(run.cases[0].descriptor, asOf: history[0].timestamp.addingTimeInterval(-1))
        #expect(before.isEmpty)

        // Text queries as of a commit: every record of the entity, sorted, against the state.
        let everything = try QueryParser.parse("Gadget sort by stock desc limit 25 offset 3")
        for _ in 0..<50 {
            let sequence = UInt64.random(in: 0...head, using: &random)
            let (rows, at) = try run.container.store.run(everything, asOf: .sequence(sequence))
            let expected = LiveQueryOracleTests.expected(
                run.states[Int(sequence)], { _ in true }, [SortDescriptor(\.stock, order: .reverse)], limit: 25,
                offset: 3)
            #expect(at == sequence)
            #expect(rows.map { try! RecordCoder.decode(Gadget.self, from: $0.record.recordBytes()) } == expected)
        }
        let error = #expect(throws: RillError.self) {
            try context.fetch(run.cases[0].descriptor, asOf: HistoryToken(sequence: head + 1))
        }
        #expect(error?.code == .misuse && error?.message.contains("last commit is \(head)") == true)

        // Every resume from a commit: the first observer is told of one change that turns the
        // recorded results then into the current ones (none when nothing changed for it).
        var elements = ChangeElements()
        var resumedWithChange = 0
        for round in 0..<150 {
            let sequence = round < 3 ? [0, head - 1, head][round] : UInt64.random(in: 0...head, using: &random)
            let query = run.cases.randomElement(using: &random)!
            let live = try LiveQuery(query.descriptor, in: run.container, since: HistoryToken(sequence: sequence))
            let received = Received()
            let queue = DispatchQueue(label: "resume")
            let observation = live.observe(on: queue) { change in received.changes.append(change) }
            queue.sync {}
            let (old, current) = (query.expected(run.states[Int(sequence)]), query.expected(run.states[Int(head)]))
            #expect(Array(live) == current)
            #expect(received.changes.count <= 1, "as of \(sequence): \(query.text)")
            if let change = received.changes.first {
                resumedWithChange += 1
                #expect(change.sequence == head)
                #expect(
                    change.apply(to: old) == current, "resume after \(sequence): \(query.text), seed \(random.seed)")
                let wrong = elements.mismatches(of: change, previous: old, next: current, equal: ==)
                #expect(wrong.isEmpty, "resume after \(sequence): \(wrong)")
            } else {
                #expect(old == current, "resume after \(sequence) told of no change: \(query.text)")
            }
            observation.cancel()
        }
        #expect(resumedWithChange > 50)
        let late = #expect(throws: RillError.self) {
            _ = try LiveQuery(run.cases[0].descriptor, in: run.container, since: HistoryToken(sequence: head + 1))
        }
        #expect(late?.code == .misuse)

        // Every replay of a range (rill watch --from A --to B) of text queries reproduces the
        // recorded results after each commit of the range, from those at A.
        let texts: [(String, @Sendable (Gadget) -> Bool, [SortDescriptor<Gadget>], Int?, Int?)] = [
            (
                "Gadget where stock > 50 sort by price desc limit 10 offset 2", { $0.stock > 50 },
                [SortDescriptor(\.price, order: .reverse)], 10, 2
            ),
            ("Gadget where active == true sort by stock", { $0.active }, [SortDescriptor(\.stock)], nil, nil),
            ("Gadget sort by price limit 3", { _ in true }, [SortDescriptor(\.price)], 3, nil),
        ]
        for round in 0..<20 {
            let (text, check, sort, limit, offset) = texts[round % texts.count]
            let start = UInt64.random(in: 0..<head, using: &random)
            let end = UInt64.random(in: start...min(head, start + 300), using: &random)
            let replay = try RecordReplay(try QueryParser.parse(text), store: run.container.store, from: start, to: end)
            func expected(_ sequence: UInt64) -> [Gadget] {
                LiveQueryOracleTests.expected(run.states[Int(sequence)], check, sort, limit: limit, offset: offset)
            }
            func models(_ rows: [QueryRow]) -> [Gadget] {
                rows.map { try! RecordCoder.decode(Gadget.self, from: $0.record.recordBytes()) }
            }
            var rows = replay.initial
            #expect(models(rows) == expected(start), "\(text) from \(start)")
            var changes = replay.changes[...]
            for sequence in (start + 1)..<(end + 1) {
                if let change = changes.first, change.sequence == sequence {
                    changes.removeFirst()
                    rows = change.apply(to: rows)
                }
                #expect(
                    models(rows) == expected(sequence), "\(text) from \(start), after \(sequence), seed \(random.seed)")
            }
            #expect(changes.isEmpty)
        }

        // Every change of the history carries the recorded records on either side of its commit.
        for transaction in history {
            let (old, new) = (run.states[Int(transaction.sequence) - 1], run.states[Int(transaction.sequence)])
            for change in transaction.changes {
                let id = try #require(change.identifier(as: Int.self))
                #expect(try change.before(as: Gadget.self) == old[id], "commit \(transaction.sequence), gadget \(id)")
                #expect(try change.after(as: Gadget.self) == new[id], "commit \(transaction.sequence), gadget \(id)")
            }
        }
    }
}
