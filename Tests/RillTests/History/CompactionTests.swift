import Dispatch
import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Compaction against the recorded past: every answer about the horizon or later — as-of
/// fetches, history, resumes, a replay — is what it was before (and what the record of the run
/// says); a registered subscription is never passed; every request before the horizon fails
/// with `.historyCompacted`; new saves go on from the head; and the shrunk file answers the same.
@Suite struct CompactionTests {
    let directory = TemporaryDirectory()

    /// Everything the store answers about commits at or after `from`, for comparing.
    static func answers(
        _ run: TimeTravelOracleTests.Run, from: UInt64, sequences: [UInt64]
    ) throws -> [String] {
        let context = run.container.mainContext
        var answers: [String] = []
        for sequence in sequences {
            for query in run.cases.prefix(20) {
                answers.append("\(try context.fetch(query.descriptor, asOf: HistoryToken(sequence: sequence)))")
            }
        }
        for transaction in try context.fetchHistory(HistoryDescriptor(after: HistoryToken(sequence: from))) {
            answers.append(
                "\(transaction.sequence) \(transaction.timestamp) \(transaction.author ?? "-") "
                    + transaction.changes.map {
                        "\($0.kind) \($0.identifierDescription) \(String(describing: try? $0.before(as: Gadget.self))) "
                            + "\(String(describing: try? $0.after(as: Gadget.self))) \($0.changedFields)"
                    }.joined(separator: ";"))
        }
        let query = try QueryParser.parse("Gadget where stock > 20 sort by price desc limit 10")
        answers.append("\(try RecordReplay(query, store: run.container.store, from: from).changes.map(\.sequence))")
        return answers
    }

    @Test func compactionKeepsEveryAnswerAfterTheHorizonAndRefusesTheOlderOnes() throws {
        var random = SeededGenerator(label: "compaction")
        let url = directory.url.appendingPathComponent("store")
        var run = try TimeTravelOracleTests.makeRun(at: url, saves: 600, random: &random)
        let store = run.container.store
        let context = run.container.mainContext
        let head = UInt64(run.states.count - 1)
        let horizon = head / 2
        let sequences = [horizon, horizon + 1, (horizon + head) / 2, head]
        let before = try Self.answers(run, from: horizon, sequences: sequences)
        let entries = try store.entryCount()

        // A subscription behind the horizon stops the compaction; nothing changes.
        try run.container.registerSubscription(named: "sync", at: HistoryToken(sequence: horizon - 10))
        let refused = #expect(throws: RillError.self) { _ = try store.compact(before: horizon + 1) }
        #expect(refused?.code == .historyRetained && refused?.message.contains("\"sync\"") == true)
        #expect(refused?.message.contains("up to \(horizon - 10)") == true, "\(String(describing: refused))")
        #expect(try store.entryCount() == entries)
        try run.container.registerSubscription(named: "sync", at: HistoryToken(sequence: horizon))
        #expect(try run.container.subscriptions() == ["sync": HistoryToken(sequence: horizon)])

        let report = try store.compact(before: horizon + 1)
        #expect(report.horizon == horizon && report.droppedCommits == Int(horizon) && report.head == head)
        #expect(report.snapshotRecords == run.states[Int(horizon)].count)
        #expect(try store.entryCount() == entries - Int(horizon))
        #expect(try Self.answers(run, from: horizon, sequences: sequences) == before)
        for sequence in sequences {
            let query = run.cases.randomElement(using: &random)!
            #expect(
                try context.fetch(query.descriptor, asOf: HistoryToken(sequence: sequence))
                    == query.expected(run.states[Int(sequence)]))
        }
        #expect(try store.check().isHealthy)
        let rebuilt = try store.rebuild()
        #expect(rebuilt.commits == Int(head - horizon))
        #expect(try store.check().isHealthy)
        #expect(try Self.answers(run, from: horizon, sequences: sequences) == before)

        // Every request before the horizon is refused, naming it.
        let earlier = HistoryToken(sequence: horizon - 1)
        let descriptor = run.cases[0].descriptor
        let firstDate = try #require(try context.fetchHistory(HistoryDescriptor(fetchLimit: 1)).first?.timestamp)
        let refusals: [(String, () throws -> Void)] = [
            ("history", { _ = try context.fetchHistory(HistoryDescriptor(after: earlier)) }),
            (
                "history since",
                { _ = try context.fetchHistory(HistoryDescriptor(since: Date(timeIntervalSince1970: 0))) }
            ),
            ("as of", { _ = try context.fetch(descriptor, asOf: earlier) }),
            ("as of a date", { _ = try context.fetch(descriptor, asOf: Date(timeIntervalSince1970: 0)) }),
            ("resume", { _ = try LiveQuery(descriptor, in: run.container, since: earlier) }),
            (
                "text resume",
                { _ = try RecordLiveQuery(try QueryParser.parse("Gadget"), store: store, since: horizon - 1) { _ in } }
            ),
            ("replay", { _ = try RecordReplay(try QueryParser.parse("Gadget"), store: store, from: horizon - 1) }),
            ("subscription", { try run.container.registerSubscription(named: "late", at: earlier) }),
        ]
        for (what, request) in refusals {
            let error = #expect(throws: RillError.self, "\(what)") { try request() }
            #expect(error?.code == .historyCompacted, "\(what): \(String(describing: error))")
            #expect(
                error?.message.contains("compacted up to commit \(horizon)") == true,
                "\(what): \(String(describing: error))")
        }
        // Without a lower bound, the history starts after the horizon; a date after the horizon
        // but before the first commit kept reads the horizon's state.
        #expect(try context.fetchHistory(HistoryDescriptor()).first?.sequence == horizon + 1)
        #expect(
            try context.fetch(descriptor, asOf: firstDate.addingTimeInterval(-0.000_000_5))
                == run.cases[0].expected(run.states[Int(horizon)]))

        // New saves go on from the head, and a second compaction folds further.
        context.insert(Gadget.random(id: 500, using: &random))
        #expect(try context.save() == head + 1)
        run.states.append(run.states.last!.merging([500: try #require(try context.model(Gadget.self, id: 500))]) { $1 })
        try run.container.removeSubscription(named: "sync")
        let second = try store.compact(before: head)
        #expect(second.horizon == head - 1 && second.firstRetained == head && second.head == head + 1)
        #expect(try store.compact(before: head).droppedCommits == 0)
        #expect(try store.check().isHealthy)
        for query in run.cases {
            #expect(
                try context.fetch(query.descriptor, asOf: HistoryToken(sequence: head - 1))
                    == query.expected(run.states[Int(head - 1)]))
            #expect(try context.fetch(query.descriptor) == query.expected(run.states[Int(head + 1)]))
        }
        let tooFar = #expect(throws: RillError.self) { _ = try store.compact(before: head + 2) }
        #expect(tooFar?.code == .misuse)
    }

    @Test func theFileShrinksOnlyWhenNoProcessHasTheStoreOpen() throws {
        var random = SeededGenerator(label: "compaction file")
        let url = directory.url.appendingPathComponent("store")
        let cases: [TimeTravelOracleTests.Case]
        let expected: [[Gadget]]
        do {
            let run = try TimeTravelOracleTests.makeRun(at: url, saves: 400, random: &random)
            _ = try run.container.store.compact(before: UInt64(run.states.count - 1))
            #expect(try Store.reclaimSpace(directory: url.path) == .busy, "this process has it open")
            cases = run.cases
            expected = try cases.map { try run.container.mainContext.fetch($0.descriptor) }
        }
        // Another process holding the store open keeps the file as it is.
        let holder = try RillProcess(["watch", "--json", url.path, "Gadget limit 1"])
        #expect(holder.wait { !$0.isEmpty })
        #expect(try Store.reclaimSpace(directory: url.path) == .busy, "another process has it open")
        #expect(holder.stop(SIGTERM) == 0)
        guard case .rewritten(let before, let after) = try Store.reclaimSpace(directory: url.path) else {
            Issue.record("the file was not rewritten once every process closed the store")
            return
        }
        #expect(after < before, "\(before) → \(after) bytes")
        let container = try ModelContainer(for: Gadget.self, configurations: ModelConfiguration(url: url))
        #expect(try container.store.check().isHealthy)
        #expect(try cases.map { try container.mainContext.fetch($0.descriptor) } == expected)
        // It goes on taking saves.
        container.mainContext.insert(Gadget.random(id: 1_000, using: &random))
        #expect(try container.mainContext.save() != nil)
        #expect(try container.store.check().isHealthy)
    }
}
