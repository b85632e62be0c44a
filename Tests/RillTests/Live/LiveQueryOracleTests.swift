import Dispatch
import Foundation
import RillTestSupport
import RillWorkloads
import Synchronization
import Testing

@testable import Rill

/// Live queries against brute force: many random live queries (predicates, multi-key sorts,
/// windows) over a store receiving random saves (`make oracle`: 200 queries, 5,000 saves). After each save, for every query: a change was
/// delivered if and only if its results changed, the previous results with the change applied
/// equal the brute-force results and the query's own, every element a change carries is the one
/// at its offset in the results before or after it (``ChangeElements``), and sequences only grow.
@Suite struct LiveQueryOracleTests {
    let directory = TemporaryDirectory()

    /// Collects the changes delivered to one query's observer.
    final class Received: @unchecked Sendable {
        // Guarded by the collecting queue: written in the handler, read after draining the queue.
        var changes: [ResultsChange<Gadget>] = []
    }

    struct Followed {
        var query: LiveQuery<Gadget>
        var observation: LiveObservation
        var received: Received
        var check: @Sendable (Gadget) -> Bool
        var sort: [SortDescriptor<Gadget>]
        var limit: Int?
        var offset: Int?
        var text: String
        var previous: [Gadget]
        var lastSequence: UInt64
    }

    static let sorts: [[SortDescriptor<Gadget>]] = [
        [],
        [SortDescriptor(\.stock)],
        [SortDescriptor(\.price, order: .reverse)],
        [SortDescriptor(\.rating), SortDescriptor(\.stock, order: .reverse)],
        [SortDescriptor(\.spec.weight, order: .reverse), SortDescriptor(\.name)],
        [SortDescriptor(\.maker), SortDescriptor(\.stock)],
        [SortDescriptor(\.released, order: .reverse)],
    ]

    static func expected(
        _ records: [Int: Gadget], _ check: (Gadget) -> Bool, _ sort: [SortDescriptor<Gadget>], limit: Int?,
        offset: Int?
    ) -> [Gadget] {
        let sorted = records.values.filter(check).sorted { lhs, rhs in
            for descriptor in sort {
                let order = descriptor.compare(lhs, rhs)
                if order != .orderedSame { return order == .orderedAscending }
            }
            return lhs.id < rhs.id  // identifier order: Int keys sort as the integers do
        }
        return Array(sorted.dropFirst(max(offset ?? 0, 0)).prefix(max(limit ?? .max, 0)))
    }

    static func randomDescriptor(
        _ random: inout SeededGenerator, windows: Bool = true
    ) -> (FetchDescriptor<Gadget>, @Sendable (Gadget) -> Bool, [SortDescriptor<Gadget>], String) {
        let (predicate, check, text) = FetchOracleTests.randomCase(&random)
        let sort = sorts.randomElement(using: &random)!
        var descriptor = FetchDescriptor<Gadget>(predicate: predicate, sortBy: sort)
        if windows, Int.random(in: 0..<3, using: &random) > 0 {
            descriptor.fetchLimit = Int.random(in: 0...30, using: &random)
        }
        if windows, Bool.random(using: &random) { descriptor.fetchOffset = Int.random(in: 0...15, using: &random) }
        let window = "limit \(descriptor.fetchLimit.map(String.init) ?? "-") offset \(descriptor.fetchOffset ?? 0)"
        return (descriptor, check, sort, "\(text), sort #\(sorts.firstIndex(of: sort) ?? -1), \(window)")
    }

    @Test func randomLiveQueriesMatchBruteForce() throws {
        try runOracle(
            label: "live query oracle", queries: OracleScale.value("RILL_LIVE_QUERIES", default: 30), windows: true,
            saves: OracleScale.value("RILL_LIVE_SAVES", default: 400))
    }

    /// Many queries without a window, so that a save affects enough of them for the follower to
    /// apply it on two threads: the same checks hold, and commits were applied that way.
    @Test func queriesAppliedOnTwoThreadsMatchBruteForce() throws {
        let follower = try runOracle(label: "two-thread apply oracle", queries: 60, windows: false, saves: 250)
        if ProcessInfo.processInfo.activeProcessorCount > 1 {
            #expect(follower.parallelRounds > 0, "no commit was applied on two threads")
        }
    }

    /// Random live queries (with fetch windows when `windows` is true) over a store receiving
    /// `saves` random saves, each checked against brute force after every save; the store's follower.
    @discardableResult
    private func runOracle(label: String, queries queryCount: Int, windows: Bool, saves: Int) throws -> LogFollower {
        var random = SeededGenerator(label: label)
        let container = try ModelContainer(
            for: Gadget.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = ModelContext(container)
        var records: [Int: Gadget] = [:]
        let idSpace = OracleScale.value("RILL_LIVE_RECORDS", default: 240)
        for id in 0..<(idSpace / 2) {
            let gadget = Gadget.random(id: id, using: &random)
            context.insert(gadget)
            records[id] = gadget
        }
        try context.save()

        let collector = DispatchQueue(label: "live oracle collector")
        var followed: [Followed] = []
        for _ in 0..<queryCount {
            let (descriptor, check, sort, text) = Self.randomDescriptor(&random, windows: windows)
            let query = try LiveQuery(descriptor, in: container)
            let received = Received()
            let observation = query.observe(on: collector) { received.changes.append($0) }
            let expected = Self.expected(
                records, check, sort, limit: descriptor.fetchLimit, offset: descriptor.fetchOffset)
            #expect(Array(query) == expected, "initial results of \(text)")
            followed.append(
                Followed(
                    query: query, observation: observation, received: received, check: check, sort: sort,
                    limit: descriptor.fetchLimit, offset: descriptor.fetchOffset, text: text, previous: expected,
                    lastSequence: query.sequence))
        }

        var failures = 0
        var elements = ChangeElements()
        for round in 0..<saves {
            let before = records
            var touched: Set<Int> = []
            // A random save: inserts, updates (some of one field only) and deletes, 1 to 8 changes.
            for _ in 0..<(Int.random(in: 0..<4, using: &random) == 0 ? Int.random(in: 2...8, using: &random) : 1) {
                let id = Int.random(in: 0..<idSpace, using: &random)
                touched.insert(id)
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<3:
                    context.delete(Gadget.random(id: id, using: &random))
                    records[id] = nil
                case 3..<6:
                    guard var gadget = records[id] else { fallthrough }
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0: gadget.stock = Int.random(in: -5...200, using: &random)
                    case 1: gadget.tags = ["new", "sale"].shuffled(using: &random)
                    case 2: gadget.price = Double(Int.random(in: -500...50_000, using: &random)) / 100
                    default: gadget.spec.weight = Int.random(in: 0...1000, using: &random)
                    }
                    context.insert(gadget)
                    records[id] = gadget
                default:
                    let gadget = Gadget.random(id: id, using: &random)
                    context.insert(gadget)
                    records[id] = gadget
                }
            }
            // Now and then a query changes its descriptor instead.
            var replaced: Int?
            if Int.random(in: 0..<50, using: &random) == 0 {
                let index = Int.random(in: 0..<followed.count, using: &random)
                let (descriptor, check, sort, text) = Self.randomDescriptor(&random, windows: windows)
                try followed[index].query.setDescriptor(descriptor)
                followed[index].check = check
                followed[index].sort = sort
                followed[index].limit = descriptor.fetchLimit
                followed[index].offset = descriptor.fetchOffset
                followed[index].text = text
                replaced = index
            }
            let sequence = try context.save()
            try followed[0].query.catchUp()
            collector.sync {}

            for index in followed.indices {
                let item = followed[index]
                // Brute force, when a record the save touched matched the query before or after it
                // (otherwise the set of matching records, and so the results, are the same).
                let affected =
                    index == replaced
                    || touched.contains { id in
                        before[id].map(item.check) == true || records[id].map(item.check) == true
                    }
                let expected =
                    affected
                    ? Self.expected(records, item.check, item.sort, limit: item.limit, offset: item.offset)
                    : item.previous
                let changes = item.received.changes
                item.received.changes = []
                let changed = expected != item.previous
                let label = "round \(round), query \(index) (\(item.text))"
                if index == replaced {
                    // The descriptor change, then maybe the save's change.
                    #expect(changes.count <= 2, "\(label): \(changes.count) changes")
                } else {
                    #expect(
                        changes.count == (changed ? 1 : 0), "\(label): \(changes.count) changes, changed: \(changed)")
                }
                var applied = item.previous
                for (number, change) in changes.enumerated() {
                    #expect(change.sequence >= item.lastSequence, "\(label): sequence went back")
                    #expect(!change.isEmpty, "\(label): an empty change")
                    let next = change.apply(to: applied)
                    // The last change leads to the brute-force results; a descriptor change before
                    // it, to the results it gives.
                    let mismatches = elements.mismatches(
                        of: change, previous: applied, next: number == changes.count - 1 ? expected : next, equal: ==)
                    if !mismatches.isEmpty {
                        failures += 1
                        Issue.record("\(label): \(change)\n\(mismatches.joined(separator: "\n"))")
                    }
                    applied = next
                    followed[index].lastSequence = change.sequence
                }
                if applied != expected || Array(item.query) != expected {
                    failures += 1
                    Issue.record(
                        """
                        \(label): previous + changes != expected
                        changes: \(changes)
                        expected: \(expected.map(\.id))
                        applied:  \(applied.map(\.id))
                        query:    \(item.query.map(\.id))
                        """)
                }
                if let sequence, changed, index != replaced {
                    #expect(changes.last?.sequence == sequence, "\(label): change sequence")
                }
                if let sequence { #expect(item.query.sequence >= sequence, "\(label): query sequence") }
                followed[index].previous = expected
            }
            if failures > 5 { break }
        }
        #expect(elements.changed > 0, "no update or move of a changed record was delivered (\(elements.checked))")
        _ = followed.map(\.observation)
        let follower = try LogFollowers.retain(for: container.store)
        LogFollowers.release(follower)
        return follower
    }

    /// Commits that pile up while the follower is busy are read in one batch, whose transaction
    /// sees the last of them: each is still applied as of itself, one change each, and windows
    /// refilled from the store are corrected for the later commits.
    @Test func aLaggingFollowerAppliesEachCommitAsOfItself() throws {
        var random = SeededGenerator(label: "lagging follower")
        let container = try ModelContainer(
            for: Gadget.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = ModelContext(container)
        var records: [Int: Gadget] = [:]
        for id in 0..<120 {
            let gadget = Gadget.random(id: id, using: &random)
            context.insert(gadget)
            records[id] = gadget
        }
        try context.save()
        let collector = DispatchQueue(label: "lagging collector")
        var followed:
            [(
                LiveQuery<Gadget>, LiveObservation, Received, @Sendable (Gadget) -> Bool, [SortDescriptor<Gadget>],
                Int?, Int?
            )] = []
        for _ in 0..<12 {
            var (descriptor, check, sort, _) = Self.randomDescriptor(&random)
            descriptor.fetchLimit = Int.random(in: 1...6, using: &random)
            let query = try LiveQuery(descriptor, in: container)
            let received = Received()
            let observation = query.observe(on: collector) { received.changes.append($0) }
            followed.append((query, observation, received, check, sort, descriptor.fetchLimit, descriptor.fetchOffset))
        }
        let follower = try LogFollowers.retain(for: container.store)
        defer { LogFollowers.release(follower) }

        var elements = ChangeElements()
        for round in 0..<40 {
            // Hold the follower in a job while several saves land.
            let release = follower.holdForTesting()
            var expectedAfter: [[[Gadget]]] = []  // save → query → results
            var sequences: [UInt64] = []
            // Rounds that mostly delete (so that windows run out of rows and are refilled from
            // the store) alternate with rounds that mostly insert.
            let deleting = round % 2 == 0
            for _ in 0..<Int.random(in: 2...6, using: &random) {
                for _ in 0..<Int.random(in: 1...8, using: &random) {
                    let id = Int.random(in: 0..<160, using: &random)
                    if Int.random(in: 0..<10, using: &random) < (deleting ? 8 : 2) {
                        context.delete(Gadget.random(id: id, using: &random))
                        records[id] = nil
                    } else {
                        let gadget = Gadget.random(id: id, using: &random)
                        context.insert(gadget)
                        records[id] = gadget
                    }
                }
                guard let sequence = try context.save() else { continue }
                sequences.append(sequence)
                expectedAfter.append(followed.map { Self.expected(records, $0.3, $0.4, limit: $0.5, offset: $0.6) })
            }
            let previous = followed.map { Array($0.0) }
            release()
            try followed[0].0.catchUp()
            collector.sync {}
            for (index, item) in followed.enumerated() {
                var current = previous[index]
                var changes = item.2.changes[...]
                item.2.changes = []
                for (step, sequence) in sequences.enumerated() {
                    let expected = expectedAfter[step][index]
                    if expected != current {
                        guard let change = changes.popFirst() else {
                            Issue.record("round \(round), query \(index): no change for commit \(sequence)")
                            break
                        }
                        #expect(change.sequence == sequence, "round \(round), query \(index)")
                        let mismatches = elements.mismatches(of: change, previous: current, next: expected, equal: ==)
                        #expect(mismatches.isEmpty, "round \(round), query \(index), commit \(sequence): \(mismatches)")
                        current = change.apply(to: current)
                        #expect(current == expected, "round \(round), query \(index), commit \(sequence): \(change)")
                        current = expected
                    } else if changes.first?.sequence == sequence {
                        Issue.record(
                            "round \(round), query \(index): a change for commit \(sequence), which changed nothing")
                        changes.removeFirst()
                    }
                }
                #expect(changes.isEmpty, "round \(round), query \(index): \(changes.count) changes left")
                #expect(Array(item.0) == current, "round \(round), query \(index): results")
            }
        }
    }
}
