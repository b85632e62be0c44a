import Dispatch
import Foundation
import Observation
import RillLocks
import RillStorage
import RillTestSupport
import RillWorkloads
import Synchronization
import Testing

@testable import Rill

/// Live queries one behavior at a time: observers, cancellation, streams, actors, observation
/// tracking, descriptor changes, windows refilled from the store, and another process's saves.
@Suite struct LiveQueryTests {
    let directory = TemporaryDirectory()

    func container() throws -> ModelContainer {
        try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
    }

    /// Changes delivered to an observer, read after draining its queue.
    final class Inbox: @unchecked Sendable {
        // Guarded by the observer's queue.
        var changes: [ResultsChange<Counter>] = []
    }

    @discardableResult
    func save(_ context: ModelContext, _ counters: [Counter], deleting: [Int] = []) throws -> UInt64? {
        for counter in counters { context.insert(counter) }
        for id in deleting { context.delete(Counter(id: id, value: 0)) }
        return try context.save()
    }

    @Test func anObserverGetsOneChangePerAffectingSaveAndNoneOtherwise() throws {
        let container = try container()
        let context = ModelContext(container)
        try save(context, (0..<10).map { Counter(id: $0, value: $0) })
        let query = try LiveQuery(
            FetchDescriptor<Counter>(predicate: #Predicate { $0.value >= 5 }, sortBy: [SortDescriptor(\.value)]),
            in: container)
        #expect(query.map(\.id) == [5, 6, 7, 8, 9])
        let queue = DispatchQueue(label: "observer")
        let inbox = Inbox()
        let observation = query.observe(on: queue) { inbox.changes.append($0) }

        // Not affecting: a record that neither matched nor matches.
        try save(context, [Counter(id: 1, value: 2)])
        // Affecting: a new match at the front, a match leaving, one moving to the end.
        let second = try save(
            context, [Counter(id: 20, value: 5), Counter(id: 9, value: 0), Counter(id: 5, value: 50)])
        try query.catchUp()
        queue.sync {}
        #expect(inbox.changes.count == 1)
        let change = try #require(inbox.changes.first)
        #expect(change.sequence == second)
        #expect(change.removals.map(\.offset) == [4])
        #expect(change.apply(to: [5, 6, 7, 8, 9].map { Counter(id: $0, value: $0) }).map(\.id) == [20, 6, 7, 8, 5])
        #expect(query.map(\.id) == [20, 6, 7, 8, 5])
        #expect(query.sequence == second)
        #expect(query.results.sequence == second)
        let difference = change.difference(from: [5, 6, 7, 8, 9].map { Counter(id: $0, value: $0) })
        #expect(
            [5, 6, 7, 8, 9].map { Counter(id: $0, value: $0) }.applying(difference)?.map(\.id) == [20, 6, 7, 8, 5])
        observation.cancel()
    }

    @Test func updatesAndMovesCarryTheElementBeforeAndAfter() throws {
        let container = try container()
        let context = ModelContext(container)
        try save(context, (0..<5).map { Counter(id: $0, value: $0 * 10) })
        let query = try LiveQuery(FetchDescriptor<Counter>(sortBy: [SortDescriptor(\.value)]), in: container)
        let queue = DispatchQueue(label: "observer")
        let inbox = Inbox()
        let observation = query.observe(on: queue) { inbox.changes.append($0) }

        // In place: the payload, and a value that keeps the order.
        try save(context, [Counter(id: 1, value: 10, payload: "new"), Counter(id: 3, value: 31)])
        // Reordered: 4 goes first.
        try save(context, [Counter(id: 4, value: -1, payload: "first")])
        try query.catchUp()
        queue.sync {}
        #expect(inbox.changes.count == 2)
        let updates = try #require(inbox.changes.first).updates
        #expect(updates.map(\.offset) == [1, 3])
        #expect(updates.map(\.oldElement) == [Counter(id: 1, value: 10), Counter(id: 3, value: 30)])
        #expect(updates.map(\.element) == [Counter(id: 1, value: 10, payload: "new"), Counter(id: 3, value: 31)])
        let moves = try #require(inbox.changes.last).moves
        #expect(moves.map { [$0.from, $0.to] } == [[4, 0]])
        #expect(moves.map(\.oldElement) == [Counter(id: 4, value: 40)])
        #expect(moves.map(\.element) == [Counter(id: 4, value: -1, payload: "first")])
        observation.cancel()
    }

    @Test func aCancelledObserverHearsNothingMoreAndIsReleased() throws {
        let container = try container()
        let context = ModelContext(container)
        let query = try LiveQuery(FetchDescriptor<Counter>(), in: container)
        final class Listener: Sendable {}
        weak var weakListener: Listener?
        let queue = DispatchQueue(label: "observer")
        let inbox = Inbox()
        var observation: LiveObservation?
        do {
            let listener = Listener()
            weakListener = listener
            observation = query.observe(on: queue) { change in
                _ = listener
                inbox.changes.append(change)
            }
        }
        try save(context, [Counter(id: 1, value: 1)])
        try query.catchUp()
        queue.sync {}
        #expect(inbox.changes.count == 1)
        observation?.cancel()
        try save(context, [Counter(id: 2, value: 2)])
        try query.catchUp()
        queue.sync {}
        #expect(inbox.changes.count == 1, "a cancelled observer was called")
        #expect(weakListener == nil, "the cancelled observer's closure is still held")

        // Releasing an observation cancels it.
        var released: LiveObservation? = query.observe(on: queue) { inbox.changes.append($0) }
        _ = released
        released = nil
        try save(context, [Counter(id: 3, value: 3)])
        try query.catchUp()
        queue.sync {}
        #expect(inbox.changes.count == 1)
    }

    @Test func aReleasedQueryEndsItsStreamsAndHoldsNoReadTransaction() async throws {
        let container = try container()
        let context = ModelContext(container)
        weak var weakQuery: LiveQuery<Counter>?
        var stream: AsyncStream<ResultsChange<Counter>>?
        do {
            let query = try LiveQuery(FetchDescriptor<Counter>(sortBy: [SortDescriptor(\.value)]), in: container)
            weakQuery = query
            stream = query.changes
            try save(context, [Counter(id: 1, value: 1)])
            try query.catchUp()
        }
        #expect(weakQuery == nil, "the live query outlived its last reference")
        var iterator = stream!.makeAsyncIterator()
        #expect(await iterator.next()?.insertions.count == 1)
        #expect(await iterator.next() == nil, "the stream did not end with its query")
        // The follower stops with its last query: no read transaction stays open.
        try save(context, [Counter(id: 2, value: 2)])
        var open = container.store.environment.openReadTransactionCount()
        for _ in 0..<100 where open > 0 {
            try await Task.sleep(for: .milliseconds(10))
            open = container.store.environment.openReadTransactionCount()
        }
        #expect(open == 0)
    }

    @Test func changesArriveInCommitOrderAsAnAsyncSequenceAndOnAnActor() async throws {
        let container = try container()
        let context = ModelContext(container)
        let query = try LiveQuery(FetchDescriptor<Counter>(sortBy: [SortDescriptor(\.value)]), in: container)
        actor Recorder {
            var sequences: [UInt64] = []
            func record(_ sequence: UInt64) { sequences.append(sequence) }
        }
        let recorder = Recorder()
        let observation = query.observe(on: recorder) { recorder, change in recorder.record(change.sequence) }
        let stream = query.changes
        var saved: [UInt64] = []
        for index in 0..<50 {
            if let sequence = try save(context, [Counter(id: index % 7, value: index)]) { saved.append(sequence) }
        }
        try query.catchUp()
        var streamed: [UInt64] = []
        for await change in stream {
            streamed.append(change.sequence)
            if streamed.count == saved.count { break }
        }
        #expect(streamed == saved)
        for _ in 0..<200 where await recorder.sequences.count < saved.count {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(await recorder.sequences == saved)
        observation.cancel()
    }

    @Test func observationTrackingSeesResultsChange() throws {
        let container = try container()
        let context = ModelContext(container)
        let query = try LiveQuery(FetchDescriptor<Counter>(), in: container)
        let fired = Atomic(0)
        withObservationTracking {
            _ = query.count
        } onChange: {
            fired.add(1, ordering: .relaxed)
        }
        try save(context, [Counter(id: 1, value: 1)])
        try query.catchUp()
        #expect(fired.load(ordering: .relaxed) == 1)
        #expect(query.count == 1)
    }

    @Test func changingTheDescriptorGivesOneChangeFromTheOldResultsToTheNew() throws {
        let container = try container()
        let context = ModelContext(container)
        try save(context, (0..<20).map { Counter(id: $0, value: 19 - $0) })
        var descriptor = FetchDescriptor<Counter>(
            predicate: #Predicate { $0.value < 10 }, sortBy: [SortDescriptor(\.value)])
        let query = try LiveQuery(descriptor, in: container)
        let before = Array(query)
        let queue = DispatchQueue(label: "observer")
        let inbox = Inbox()
        let observation = query.observe(on: queue) { inbox.changes.append($0) }
        descriptor.predicate = #Predicate { $0.value >= 5 && $0.value < 15 }
        descriptor.sortBy = [SortDescriptor(\.value, order: .reverse)]
        descriptor.fetchLimit = 6
        try query.setDescriptor(descriptor)
        queue.sync {}
        let fresh = try context.fetch(descriptor)
        #expect(Array(query) == fresh)
        #expect(inbox.changes.count == 1)
        #expect(inbox.changes.first.map { $0.apply(to: before) } == fresh)
        // The same descriptor again: no change.
        try query.setDescriptor(descriptor)
        queue.sync {}
        #expect(inbox.changes.count == 1)
        // The other order: the rows it moves are the same records before and after.
        descriptor.sortBy = [SortDescriptor(\.value)]
        descriptor.fetchLimit = nil
        try query.setDescriptor(descriptor)
        queue.sync {}
        let reordered = try context.fetch(descriptor)
        let change = try #require(inbox.changes.last)
        #expect(change.moves.count == 5)
        var elements = ChangeElements()
        #expect(elements.mismatches(of: change, previous: fresh, next: reordered, equal: ==).isEmpty)
        #expect(elements.checked == 5 && elements.changed == 0)
        observation.cancel()
    }

    /// A window emptied by one commit is refilled from the store, which a lagging follower reads
    /// as of a later commit: a record that later commit changed is taken as it was, from the log.
    @Test func aRefilledWindowUsesTheLogForRecordsChangedLater() throws {
        let container = try container()
        let context = ModelContext(container)
        try save(context, (0..<40).map { Counter(id: $0, value: $0) })
        var descriptor = FetchDescriptor<Counter>(sortBy: [SortDescriptor(\.value)])
        descriptor.fetchLimit = 2
        let query = try LiveQuery(descriptor, in: container)
        let queue = DispatchQueue(label: "observer")
        let inbox = Inbox()
        let observation = query.observe(on: queue) { inbox.changes.append($0) }
        let follower = try LogFollowers.retain(for: container.store)
        defer { LogFollowers.release(follower) }
        let release = follower.holdForTesting()
        // Every held row goes (the window and its look-ahead), then a row beyond them changes.
        let first = try save(context, [], deleting: Array(0..<30))
        let second = try save(context, [Counter(id: 30, value: 1_000)])
        release()
        try query.catchUp()
        queue.sync {}
        #expect(inbox.changes.map(\.sequence) == [first, second].compactMap { $0 })
        let afterFirst = inbox.changes.first.map { $0.apply(to: [Counter(id: 0, value: 0), Counter(id: 1, value: 1)]) }
        #expect(afterFirst?.map(\.id) == [30, 31])
        #expect(query.map(\.id) == [31, 32])
        observation.cancel()
    }

    @Test func anotherProcessesSavesArriveInOrderWithCorrectChanges() throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        var descriptor = FetchDescriptor<Counter>(
            predicate: #Predicate { $0.value >= 30 }, sortBy: [SortDescriptor(\.value), SortDescriptor(\.id)])
        descriptor.fetchLimit = 8
        let query = try LiveQuery(descriptor, in: container)
        let queue = DispatchQueue(label: "observer")
        let inbox = Inbox()
        let observation = query.observe(on: queue) { inbox.changes.append($0) }

        let child = Process()
        child.executableURL = buildProductsDirectory.appendingPathComponent("rill-test-helper")
        child.arguments = ["random-saves", path, String(SeededGenerator(label: "cross-process").seed), "300"]
        child.standardOutput = Pipe()
        try child.run()
        child.waitUntilExit()
        #expect(child.terminationStatus == 0)
        try query.catchUp()
        queue.sync {}

        // Replay the log: the results after each commit, against the changes received.
        var records: [Int: Counter] = [:]
        var results: [Counter] = []
        var changes = inbox.changes[...]
        var lastSequence: UInt64 = 0
        for entry in try container.store.entries(after: 0) {
            for change in entry.changes {
                let id = try #require(change.key.withUnsafeBytes { Int(storageKey: $0) })
                records[id] = try change.record.map { try RecordCoder.decode(Counter.self, from: $0) }
            }
            let expected = Array(
                records.values.filter { $0.value >= 30 }.sorted { ($0.value, $0.id) < ($1.value, $1.id) }.prefix(8))
            if expected != results {
                let next = changes.popFirst()
                let change = try #require(next, "no change for commit \(entry.sequence)")
                #expect(change.sequence == entry.sequence)
                #expect(change.sequence > lastSequence)
                lastSequence = change.sequence
                #expect(change.apply(to: results) == expected, "commit \(entry.sequence): \(change)")
                results = expected
            } else {
                #expect(changes.first?.sequence != entry.sequence, "a change for commit \(entry.sequence)")
            }
        }
        #expect(changes.isEmpty)
        #expect(Array(query) == results)
        #expect(results == (try ModelContext(container).fetch(descriptor)))
        observation.cancel()
    }

    /// A snapshot outlives the rows it shows: in the query, in later commits, and the query itself.
    @Test func aSnapshotKeepsItsRowsAfterTheyChangeAndTheQueryIsGone() throws {
        let container = try container()
        let context = ModelContext(container)
        try save(context, (0..<600).map { Counter(id: $0, value: $0, payload: "row \($0)") })
        var snapshots: [(LiveResults<Counter>, [Counter])] = []
        do {
            var descriptor = FetchDescriptor<Counter>(sortBy: [SortDescriptor(\.value, order: .reverse)])
            descriptor.fetchLimit = 300
            let query = try LiveQuery(descriptor, in: container)
            for round in 0..<30 {
                snapshots.append((query.results, Array(query.results)))
                try save(
                    context, (0..<5).map { Counter(id: round * 20 + $0, value: -round, payload: "moved") },
                    deleting: Array((round * 20 + 5)..<(round * 20 + 15)))
                try query.catchUp()
            }
        }
        // Every snapshot still reads as it was taken.
        for (snapshot, copy) in snapshots { #expect(Array(snapshot) == copy) }
    }

    /// Constants on the left of a comparison screen changes the same way as on the right.
    @Test func comparisonsWithTheConstantFirstFollowTheStore() throws {
        var random = SeededGenerator(label: "constant first")
        let container = try container()
        let context = ModelContext(container)
        try save(context, (0..<50).map { Counter(id: $0, value: $0) })
        let low = 10
        let high = 30
        let descriptor = FetchDescriptor<Counter>(
            predicate: #Predicate { low <= $0.value && high > $0.value && 25 != $0.value },
            sortBy: [SortDescriptor(\.value)])
        let query = try LiveQuery(descriptor, in: container)
        for _ in 0..<200 {
            try save(
                context,
                [Counter(id: Int.random(in: 0..<60, using: &random), value: Int.random(in: 0..<50, using: &random))])
            try query.catchUp()
            #expect(Array(query) == (try context.fetch(descriptor)))
        }
    }

    /// Observation's handler runs on the follower thread: waiting for the follower there is
    /// refused with an error instead of a deadlock.
    @Test func waitingFromAnObservationHandlerIsRefused() throws {
        let container = try container()
        let context = ModelContext(container)
        let query = try LiveQuery(FetchDescriptor<Counter>(), in: container)
        let outcome = Lock<RillError.Code?>(nil)
        withObservationTracking {
            _ = query.count
        } onChange: {
            do {
                try query.catchUp()
            } catch let error as RillError {
                outcome.withLock { $0 = error.code }
            } catch {}
        }
        try save(context, [Counter(id: 1, value: 1)])
        try query.catchUp()
        #expect(outcome.withLock { $0 } == .misuse)
    }

    /// Every query of a store has the commit before any observer hears of it.
    @Test func observersSharingAConcurrentQueueAreCalledOneAtATimeInCommitOrder() throws {
        let container = try container()
        let context = ModelContext(container)
        var random = SeededGenerator(label: "observers on one concurrent queue")
        try save(context, (0..<40).map { Counter(id: $0, value: Int.random(in: 0..<100, using: &random)) })
        let descriptors = [
            FetchDescriptor<Counter>(predicate: #Predicate { $0.value < 50 }, sortBy: [SortDescriptor(\.value)]),
            FetchDescriptor<Counter>(predicate: #Predicate { $0.value >= 30 }, sortBy: [SortDescriptor(\.id)]),
            FetchDescriptor<Counter>(sortBy: [SortDescriptor(\.value, order: .reverse)]),
        ]
        let queries = try descriptors.map { try LiveQuery($0, in: container) }
        let queue = DispatchQueue(label: "observers", attributes: .concurrent)
        // Two observers of the first query, one of each other: each keeps a copy of the results
        // up to date from its changes alone.
        final class Copy: @unchecked Sendable {
            // Written by the observer's calls only, which never overlap (checked below).
            var ids: [Int]
            var sequences: [UInt64] = []
            init(_ ids: [Int]) { self.ids = ids }
        }
        final class Calls: Sendable {
            let running = Atomic<Int>(0)
            let overlaps = Atomic<Int>(0)
        }
        let calls = Calls()
        var observations: [LiveObservation] = []
        var copies: [(query: Int, copy: Copy)] = []
        for index in [0, 0, 1, 2] {
            let copy = Copy(queries[index].map(\.id))
            copies.append((index, copy))
            observations.append(
                queries[index].observe(on: queue) { change in
                    if calls.running.add(1, ordering: .sequentiallyConsistent).newValue > 1 {
                        calls.overlaps.add(1, ordering: .relaxed)
                    }
                    copy.ids = change.apply(to: copy.ids.map { Counter(id: $0, value: 0) }).map(\.id)
                    copy.sequences.append(change.sequence)
                    calls.running.subtract(1, ordering: .sequentiallyConsistent)
                })
        }
        for _ in 0..<150 {
            let id = Int.random(in: 0..<50, using: &random)
            if Int.random(in: 0..<6, using: &random) == 0 {
                try save(context, [], deleting: [id])
            } else {
                try save(context, [Counter(id: id, value: Int.random(in: 0..<100, using: &random))])
            }
        }
        for query in queries { try query.catchUp() }
        queue.sync(flags: .barrier) {}
        #expect(calls.overlaps.load(ordering: .relaxed) == 0, "observers on one queue ran at the same time")
        for (index, copy) in copies {
            #expect(copy.ids == queries[index].map(\.id), "query \(index): changes applied ≠ the results")
            #expect(copy.sequences == copy.sequences.sorted() && Set(copy.sequences).count == copy.sequences.count)
            #expect(!copy.sequences.isEmpty)
        }
        withExtendedLifetime(observations) {}
    }

    @Test func queriesOfAStoreAdvanceTogether() throws {
        let container = try container()
        let context = ModelContext(container)
        try save(context, (0..<40).map { Counter(id: $0, value: $0) })
        let low = try LiveQuery(FetchDescriptor<Counter>(predicate: #Predicate { $0.value < 20 }), in: container)
        let high = try LiveQuery(FetchDescriptor<Counter>(predicate: #Predicate { $0.value >= 20 }), in: container)
        let queue = DispatchQueue(label: "observer")
        let seen = Lock<[(UInt64, Int, UInt64)]>([])
        let observation = low.observe(on: queue) { change in
            // The other query already shows this commit: the two still partition the 40 records.
            let (lowResults, highResults) = (low.results, high.results)
            seen.withLock { $0.append((change.sequence, lowResults.count + highResults.count, highResults.sequence)) }
        }
        var random = SeededGenerator(label: "advance together")
        for _ in 0..<50 {
            try save(
                context,
                [Counter(id: Int.random(in: 0..<40, using: &random), value: Int.random(in: 0..<40, using: &random))])
            try low.catchUp()
            queue.sync {}
        }
        let observed = seen.withLock { $0 }
        #expect(!observed.isEmpty)
        for (sequence, total, otherSequence) in observed {
            #expect(total == 40)
            #expect(otherSequence >= sequence)
        }
        observation.cancel()
    }

    @MainActor
    @Test func anObserverOnTheMainActorRunsThere() async throws {
        let container = try container()
        let context = ModelContext(container)
        let query = try LiveQuery(FetchDescriptor<Counter>(), in: container)
        final class Box: @unchecked Sendable {
            // Main actor only.
            var sequences: [UInt64] = []
        }
        let box = Box()
        let observation = query.observe(on: MainActor.shared) { _, change in
            MainActor.assertIsolated()
            box.sequences.append(change.sequence)
        }
        let sequence = try save(context, [Counter(id: 1, value: 1)])
        try query.catchUp()
        for _ in 0..<200 where box.sequences.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        #expect(box.sequences == [sequence].compactMap { $0 })
        observation.cancel()
    }

    /// A backlog longer than one batch is applied batch by batch, each commit as of itself.
    @Test func aLongBacklogIsAppliedCommitByCommit() throws {
        var random = SeededGenerator(label: "long backlog")
        var configuration = ModelConfiguration(url: directory.url.appendingPathComponent("store"))
        configuration.durability = .unsynced
        let container = try ModelContainer(for: Counter.self, configurations: configuration)
        let context = ModelContext(container)
        var records: [Int: Counter] = [:]
        for id in 0..<60 { records[id] = Counter(id: id, value: id) }
        try save(context, Array(records.values))
        var descriptor = FetchDescriptor<Counter>(sortBy: [SortDescriptor(\.value), SortDescriptor(\.id)])
        descriptor.fetchLimit = 5
        descriptor.fetchOffset = 3
        let query = try LiveQuery(descriptor, in: container)
        let queue = DispatchQueue(label: "observer")
        let inbox = Inbox()
        let observation = query.observe(on: queue) { inbox.changes.append($0) }
        func expected() -> [Counter] {
            Array(records.values.sorted { ($0.value, $0.id) < ($1.value, $1.id) }.dropFirst(3).prefix(5))
        }
        var results = Array(query)
        var expectations: [(UInt64, [Counter])] = []
        let follower = try LogFollowers.retain(for: container.store)
        defer { LogFollowers.release(follower) }
        let release = follower.holdForTesting()
        // First the window's rows and look-ahead go one by one (so that it is refilled from the
        // store, whose snapshot is commits ahead), then the records beyond change: some in the
        // first batch, others only in later batches.
        for step in 0..<(LogFollower.batchSize * 2 + 50) {
            let id =
                step < 30
                ? step : Int.random(in: step < LogFollower.batchSize ? 30..<45 : 45..<60, using: &random)
            if step < 30 || Int.random(in: 0..<8, using: &random) == 0 {
                records[id] = nil
                guard let sequence = try save(context, [], deleting: [id]) else { continue }
                expectations.append((sequence, expected()))
            } else {
                records[id] = Counter(id: id, value: Int.random(in: 0..<60, using: &random))
                guard let sequence = try save(context, [records[id]!]) else { continue }
                expectations.append((sequence, expected()))
            }
        }
        release()
        try query.catchUp()
        queue.sync {}
        var changes = inbox.changes[...]
        for (sequence, after) in expectations where after != results {
            let next = changes.popFirst()
            let change = try #require(next, "no change for commit \(sequence)")
            #expect(change.sequence == sequence)
            results = change.apply(to: results)
            #expect(results == after, "commit \(sequence)")
            results = after
        }
        #expect(changes.isEmpty)
        #expect(Array(query) == (try context.fetch(descriptor)))
        observation.cancel()
    }
}

extension LogFollower {
    /// Keeps the follower busy in a job until the returned function is called, so that commits
    /// pile up and are then read in one batch.
    func holdForTesting() -> @Sendable () -> Void {
        let hold = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            try? self.perform { _, _ in
                holding.signal()
                hold.wait()
                return nil
            }
        }
        holding.wait()
        return { hold.signal() }
    }
}
