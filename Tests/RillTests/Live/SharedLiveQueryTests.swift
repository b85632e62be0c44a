import Dispatch
import Foundation
import Observation
import RillLocks
import RillTestSupport
import RillWorkloads
import Synchronization
import Testing

@testable import Rill

/// Typed live queries of the same descriptor share one maintained result when their sameness
/// can be decided (a predicate translated completely): each observer is told exactly what the
/// observer of a live query of its own (`sharing: false`) started at the same moment is told,
/// while others start, change their descriptor and are released around it.
@Suite struct SharedLiveQueryTests {
    let directory = TemporaryDirectory()

    /// What one observer was told, as text (guarded by the collecting queue).
    final class Told: @unchecked Sendable {
        var changes: [String] = []
        /// The results when the observer started, with every change it was told of applied.
        var results: [Gadget] = []
    }

    /// A live query that may share and one of its own, started and changed together.
    struct Pair {
        var shared: LiveQuery<Gadget>
        var own: LiveQuery<Gadget>
        /// Observers added to both at the same moment, and what each was told.
        var observers: [Observers]
        var base: Int
        var label: String
    }

    /// An observer of a pair's live query that may share, and one of its live query of its own.
    struct Observers {
        var sharedTold = Told()
        var ownTold = Told()
        var observations: [LiveObservation] = []

        /// No commit is published meanwhile (the caller saves nothing).
        init(_ shared: LiveQuery<Gadget>, _ own: LiveQuery<Gadget>, on queue: DispatchQueue) {
            let (sharedTold, ownTold) = (self.sharedTold, self.ownTold)
            sharedTold.results = Array(shared)
            ownTold.results = Array(own)
            observations = [
                shared.observe(on: queue) { change in
                    sharedTold.changes.append(SharedLiveQueryTests.describe(change))
                    change.apply(to: &sharedTold.results)
                },
                own.observe(on: queue) { change in
                    ownTold.changes.append(SharedLiveQueryTests.describe(change))
                    change.apply(to: &ownTold.results)
                },
            ]
        }
    }

    static func describe(_ change: ResultsChange<Gadget>) -> String {
        var text = "@\(change.sequence)"
        text += " -" + change.removals.map { "\($0.offset):\($0.element)" }.joined(separator: ",")
        text += " +" + change.insertions.map { "\($0.offset):\($0.element)" }.joined(separator: ",")
        text += " ~" + change.moves.map { "\($0.from)>\($0.to):\($0.oldElement)>\($0.element)" }.joined(separator: ",")
        text += " =" + change.updates.map { "\($0.offset):\($0.oldElement)>\($0.element)" }.joined(separator: ",")
        return text
    }

    @Test func sharersAreToldWhatQueriesOfTheirOwnAreTold() throws {
        var random = SeededGenerator(label: "shared live queries")
        let container = try ModelContainer(
            for: Gadget.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = ModelContext(container)
        let idSpace = 150
        for id in 0..<(idSpace / 2) { context.insert(Gadget.random(id: id, using: &random)) }
        try context.save()
        let bases = (0..<5).map { _ in LiveQueryOracleTests.randomDescriptor(&random) }
        let collector = DispatchQueue(label: "shared live queries")

        func start(_ base: Int, label: String) throws -> Pair {
            let shared = try LiveQuery(bases[base].0, in: container)
            let own = try LiveQuery(bases[base].0, in: container, sharing: false)
            return Pair(
                shared: shared, own: own, observers: [Observers(shared, own, on: collector)], base: base, label: label)
        }

        var pairs: [Pair] = []
        /// Observers cancelled: told nothing after.
        var cancelled: [(observers: Observers, label: String)] = []
        for base in bases.indices {
            for copy in 0..<2 { pairs.append(try start(base, label: "#\(base).\(copy) \(bases[base].3)")) }
        }
        var changes = 0
        var sharedPairs = 0
        for round in 0..<OracleScale.value("RILL_SHARED_LIVE_ROUNDS", default: 80) {
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                try TextQueryOracleTests.stageRandomGadgetChange(in: context, idSpace: idSpace, using: &random)
            }
            try context.save()
            // Live queries start, change their descriptor and are released meanwhile; observers
            // are added to them and cancelled.
            switch Int.random(in: 0..<8, using: &random) {
            case 0, 1:
                let base = Int.random(in: 0..<bases.count, using: &random)
                pairs.append(try start(base, label: "#\(base) from round \(round) \(bases[base].3)"))
            case 2 where pairs.count > 1:
                pairs.remove(at: Int.random(in: 0..<pairs.count, using: &random))
            case 3:
                let index = Int.random(in: 0..<pairs.count, using: &random)
                let base = Int.random(in: 0..<bases.count, using: &random)
                try pairs[index].shared.setDescriptor(bases[base].0)
                try pairs[index].own.setDescriptor(bases[base].0)
                pairs[index].base = base
                pairs[index].label += ", then #\(base) in round \(round)"
            case 4:
                // Both observers start after the commit just saved.
                let index = Int.random(in: 0..<pairs.count, using: &random)
                try pairs[index].shared.catchUp()
                pairs[index].observers.append(Observers(pairs[index].shared, pairs[index].own, on: collector))
                pairs[index].label += ", observer added in round \(round)"
            case 5:
                let index = Int.random(in: 0..<pairs.count, using: &random)
                guard !pairs[index].observers.isEmpty else { break }
                try pairs[index].shared.catchUp()
                let removed = pairs[index].observers.remove(
                    at: Int.random(in: 0..<pairs[index].observers.count, using: &random))
                for observation in removed.observations { observation.cancel() }
                collector.sync {
                    removed.sharedTold.changes = []
                    removed.ownTold.changes = []
                }
                cancelled.append((removed, "\(pairs[index].label), cancelled in round \(round)"))
                pairs[index].label += ", observer cancelled in round \(round)"
            default: break
            }
            for pair in pairs { try pair.shared.catchUp() }
            collector.sync {}
            for (observers, label) in cancelled {
                let told = collector.sync { observers.sharedTold.changes + observers.ownTold.changes }
                #expect(told.isEmpty, "round \(round), \(label): told after its cancellation")
            }
            for pair in pairs {
                for observers in pair.observers {
                    let (told, alone) = collector.sync {
                        defer {
                            observers.sharedTold.changes = []
                            observers.ownTold.changes = []
                        }
                        return (observers.sharedTold.changes, observers.ownTold.changes)
                    }
                    #expect(
                        told == alone,
                        "round \(round), \(pair.label): shared\n\(told.map { $0.prefix(300) })\nalone\n\(alone.map { $0.prefix(300) })"
                    )
                    // Each observer's changes, applied to the results it started from, give the
                    // results now.
                    let (sharedResults, ownResults) = collector.sync {
                        (observers.sharedTold.results, observers.ownTold.results)
                    }
                    #expect(sharedResults == Array(pair.shared), "round \(round), \(pair.label): changes applied")
                    #expect(ownResults == Array(pair.own), "round \(round), \(pair.label): changes applied (alone)")
                    changes += told.count
                }
                #expect(Array(pair.shared) == Array(pair.own), "round \(round), \(pair.label): results")
                #expect(pair.shared.sequence == pair.own.sequence)
            }
            // The live queries of one descriptor that can be compared follow one result; one of
            // its own shares with none.
            for pair in pairs {
                let key = ModelRowSource(bases[pair.base].0).sharingKey
                for other in pairs where other.base == pair.base && other.shared !== pair.shared {
                    let shares = try pair.shared.sharesResult(with: other.shared)
                    #expect(shares == (key != nil), "round \(round), \(pair.label) and \(other.label)")
                    if shares { sharedPairs += 1 }
                }
                #expect(try !pair.own.sharesResult(with: pair.shared))
            }
        }
        #expect(changes > 50, "too few changes told (\(changes))")
        #expect(sharedPairs > 0, "no live queries shared a result")
    }

    /// Live queries that share a result are told of a commit's change together; one first read
    /// through Observation after its sharers were told of a change is tracked from then on, and
    /// one never read costs its observers nothing they miss.
    @Test func observationTracksASharerReadAfterItsSharersWereTold() throws {
        let container = try ModelContainer(
            for: Gadget.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = ModelContext(container)
        var random = SeededGenerator(seed: 11, label: "")
        for id in 0..<20 { context.insert(Gadget.random(id: id, using: &random)) }
        try context.save()
        let low = 50
        let descriptor = FetchDescriptor<Gadget>(
            predicate: #Predicate { $0.stock >= low }, sortBy: [SortDescriptor(\.stock), SortDescriptor(\.id)])
        let queries = try (0..<3).map { _ in try LiveQuery(descriptor, in: container) }
        #expect(try queries[0].sharesResult(with: queries[1]))
        #expect(try queries[0].sharesResult(with: queries[2]))
        let queue = DispatchQueue(label: "shared observers")
        let told = Lock<[Int: [UInt64]]>([:])
        let observations = queries.indices.map { index in
            queries[index].observe(on: queue) { change in
                told.withLock { $0[index, default: []].append(change.sequence) }
            }
        }
        var next = 100
        func saveOneInRange() throws -> UInt64 {
            var gadget = Gadget.random(id: next, using: &random)
            gadget.stock = 60 + next
            next += 1
            context.insert(gadget)
            let sequence = try #require(try context.save())
            for query in queries { try query.catchUp() }
            queue.sync {}
            return sequence
        }
        let first = try saveOneInRange()
        let fired = Atomic(0)
        withObservationTracking {
            _ = queries[1].count
        } onChange: {
            fired.add(1, ordering: .relaxed)
        }
        let second = try saveOneInRange()
        #expect(fired.load(ordering: .relaxed) == 1)
        #expect(told.withLock { $0 } == [0: [first, second], 1: [first, second], 2: [first, second]])
        // An observer added once the sharers' observers were gathered is told of the next change.
        let late = queries[2].observe(on: queue) { change in
            told.withLock { $0[3, default: []].append(change.sequence) }
        }
        let third = try saveOneInRange()
        #expect(
            told.withLock { $0 } == [
                0: [first, second, third], 1: [first, second, third], 2: [first, second, third], 3: [third],
            ])
        // A cancelled one is told nothing more.
        observations[0].cancel()
        let fourth = try saveOneInRange()
        #expect(told.withLock { $0[0] } == [first, second, third])
        #expect(told.withLock { $0[3] } == [third, fourth])
        for query in queries { #expect(Array(query) == (try context.fetch(descriptor))) }
        withExtendedLifetime((observations, late)) {}
    }

    @Test func theLastLiveQueryOutStopsTheSharedResult() throws {
        let container = try ModelContainer(
            for: Gadget.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = ModelContext(container)
        var random = SeededGenerator(seed: 7, label: "")
        for id in 0..<20 { context.insert(Gadget.random(id: id, using: &random)) }
        try context.save()
        let follower = try LogFollowers.retain(for: container.store)
        defer { LogFollowers.release(follower) }
        func sharedCount() throws -> Int {
            let count = Lock(0)
            try follower.perform { _, _ in
                count.withLock { $0 = follower.sharedModelQueries.count }
                return nil
            }
            return count.withLock { $0 }
        }
        let low = 50
        let descriptor = FetchDescriptor<Gadget>(
            predicate: #Predicate { $0.stock >= low }, sortBy: [SortDescriptor(\.stock)])
        // Another predicate value of the same translation is the same query.
        let same = FetchDescriptor<Gadget>(
            predicate: #Predicate { $0.stock >= low }, sortBy: [SortDescriptor(\.stock)])
        var queries = [try LiveQuery(descriptor, in: container), try LiveQuery(same, in: container)]
        #expect(try queries[0].sharesResult(with: queries[1]))
        #expect(try sharedCount() == 1)
        queries.removeFirst()
        #expect(try sharedCount() == 1)
        var added = Gadget.random(id: 100, using: &random)
        added.stock = 60
        context.insert(added)
        try context.save()
        try queries[0].catchUp()
        #expect(Array(queries[0]) == (try context.fetch(descriptor)))
        queries.removeAll()
        #expect(try sharedCount() == 0)
        let again = try LiveQuery(descriptor, in: container)
        #expect(try sharedCount() == 1)
        #expect(Array(again) == (try context.fetch(descriptor)))
    }
}
