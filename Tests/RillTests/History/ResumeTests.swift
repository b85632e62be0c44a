import Dispatch
import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// A resumed typed live query after the catch-up: commits after it reach its observers as for
/// any live query, applied in turn to the results at the token they end at the fresh results;
/// a later observer starts from the results then, with no catch-up.
@Suite struct ResumeTests {
    let directory = TemporaryDirectory()

    final class Received: @unchecked Sendable {
        // Written on the observer's queue, read after draining it.
        var changes: [ResultsChange<Gadget>] = []
    }

    @Test func aResumedQueryGoesOnLiveAfterItsCatchUp() throws {
        var random = SeededGenerator(label: "resume then live")
        let container = try ModelContainer(
            for: Gadget.self,
            configurations: ModelConfiguration(
                url: directory.url.appendingPathComponent("store"), durability: .unsynced))
        let context = container.mainContext
        func randomSave() throws {
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let id = Int.random(in: 0..<40, using: &random)
                if Int.random(in: 0..<4, using: &random) == 0 {
                    try context.delete(model: Gadget.self, where: #Predicate { $0.id == id })
                } else {
                    context.insert(Gadget.random(id: id, using: &random))
                }
            }
            try context.save()
        }
        for _ in 0..<60 { try randomSave() }
        let descriptor = FetchDescriptor<Gadget>(
            predicate: #Predicate { $0.stock > 50 }, sortBy: [SortDescriptor(\.price)])
        var windowed = descriptor
        windowed.fetchLimit = 7
        windowed.fetchOffset = 2
        for descriptor in [descriptor, windowed] {
            let token = HistoryToken(sequence: 20)
            var results = try context.fetch(descriptor, asOf: token)
            let live = try LiveQuery(descriptor, in: container, since: token)
            // Commits between the resume and the first observer are part of its catch-up.
            for _ in 0..<5 { try randomSave() }
            try live.catchUp()
            let received = Received()
            let queue = DispatchQueue(label: "resumed")
            let observation = live.observe(on: queue) { received.changes.append($0) }
            for _ in 0..<40 { try randomSave() }
            try live.catchUp()
            queue.sync {}
            for change in received.changes { results = change.apply(to: results) }
            #expect(results == (try context.fetch(descriptor)), "seed \(random.seed)")
            #expect(zip(received.changes, received.changes.dropFirst()).allSatisfy { $0.sequence < $1.sequence })

            // A second observer starts from the results as they are: no catch-up for it.
            let second = Received()
            let other = live.observe(on: queue) { second.changes.append($0) }
            var seen = Array(live)
            for _ in 0..<10 { try randomSave() }
            try live.catchUp()
            queue.sync {}
            for change in second.changes { seen = change.apply(to: seen) }
            #expect(seen == (try context.fetch(descriptor)))
            observation.cancel()
            other.cancel()
        }
    }
}
