import Dispatch
import Foundation
import RillLocks
import RillTestSupport
import RillWorkloads
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
    }

    /// A live query that may share and one of its own, started and changed together.
    struct Pair {
        var shared: LiveQuery<Gadget>
        var sharedTold: Told
        var own: LiveQuery<Gadget>
        var ownTold: Told
        var observations: [LiveObservation]
        var base: Int
        var label: String
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
            let sharedTold = Told()
            let ownTold = Told()
            let shared = try LiveQuery(bases[base].0, in: container)
            let own = try LiveQuery(bases[base].0, in: container, sharing: false)
            let observations = [
                shared.observe(on: collector) { sharedTold.changes.append(Self.describe($0)) },
                own.observe(on: collector) { ownTold.changes.append(Self.describe($0)) },
            ]
            return Pair(
                shared: shared, sharedTold: sharedTold, own: own, ownTold: ownTold, observations: observations,
                base: base, label: label)
        }

        var pairs: [Pair] = []
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
            // Live queries start, change their descriptor and are released meanwhile.
            switch Int.random(in: 0..<6, using: &random) {
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
            default: break
            }
            for pair in pairs { try pair.shared.catchUp() }
            collector.sync {}
            for pair in pairs {
                let (told, alone) = collector.sync {
                    defer {
                        pair.sharedTold.changes = []
                        pair.ownTold.changes = []
                    }
                    return (pair.sharedTold.changes, pair.ownTold.changes)
                }
                #expect(
                    told == alone,
                    "round \(round), \(pair.label): shared\n\(told.map { $0.prefix(300) })\nalone\n\(alone.map { $0.prefix(300) })"
                )
                #expect(Array(pair.shared) == Array(pair.own), "round \(round), \(pair.label): results")
                #expect(pair.shared.sequence == pair.own.sequence)
                changes += told.count
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
