import Foundation
// RillLocks' `Lock` guards the threads' shared state: ThreadSanitizer sees it (`make tsan`).
import RillLocks
import Testing

@testable import RillStorage

/// Group commit: grouped writes queued while the writer is busy share one transaction, each
/// stays atomic, and a write that fails in a group fails alone.
@Suite struct GroupCommitTests: StorageTestSuite {
    let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("rill-group-\(UUID())")

    /// Holds the writer thread in one write until `count` other threads have started their
    /// grouped writes, so that those queue up behind it; returns the writes' outcomes by thread.
    static func queuedBehindABusyWriter(
        _ environment: Environment, count: Int, body: @escaping @Sendable (Int, WriteTransaction) throws -> Void
    ) throws -> [Result<Void, any Error>] {
        let started = DispatchSemaphore(value: 0)
        // Signalled by each thread below just before it queues its write.
        let queueing = DispatchSemaphore(value: 0)
        let outcomes = Lock<[Int: Result<Void, any Error>]>([:])
        let group = DispatchGroup()
        let blocker = Thread {
            try? environment.write { txn in
                // A transaction that writes nothing commits without a transaction number.
                let scratch = try txn.database(named: "scratch", create: true)!
                try txn.put([1], for: [1], in: scratch)
                started.signal()
                // Every thread below about to queue its write (however busy the machine is),
                // then long enough for each to have queued it.
                for _ in 0..<count { _ = queueing.wait(timeout: .now() + 10) }
                usleep(300_000)
            }
        }
        blocker.start()
        started.wait()
        startGroupedWriters(environment, count: count, queueing: queueing, outcomes: outcomes, finished: group, body)
        group.wait()
        return outcomes.withLock { results in (0..<count).map { results[$0]! } }
    }

    /// Starts `count` threads, each signalling `queueing` just before it queues a grouped write
    /// of `body`, keeping its outcome in `outcomes` and leaving `finished` once it has one.
    static func startGroupedWriters(
        _ environment: Environment, count: Int, queueing: DispatchSemaphore,
        outcomes: Lock<[Int: Result<Void, any Error>]>, finished: DispatchGroup,
        _ body: @escaping @Sendable (Int, WriteTransaction) throws -> Void
    ) {
        for thread in 0..<count {
            finished.enter()
            Thread {
                queueing.signal()
                let outcome = Result { try environment.writeGrouped { try body(thread, $0) } }
                outcomes.withLock { $0[thread] = outcome }
                finished.leave()
            }.start()
        }
    }

    @Test func writesQueuedMeanwhileShareOneTransaction() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = try open()
        let database = try environment.database(named: "things", create: true)!
        let before = environment.lastTransactionID
        let outcomes = try Self.queuedBehindABusyWriter(environment, count: 16) { thread, txn in
            try txn.put([UInt8(thread)], for: Self.key(thread), in: database)
        }
        #expect(outcomes.allSatisfy { (try? $0.get()) != nil })
        // One transaction for the busy write, then far fewer than 16 for the 16 grouped ones.
        let transactions = environment.lastTransactionID - before - 1
        #expect(transactions >= 1 && transactions <= 4, "16 queued writes took \(transactions) transactions")
        for thread in 0..<16 {
            #expect(
                try environment.read { try $0.get(Self.key(thread), in: database).map(Array.init) } == [UInt8(thread)])
        }
    }

    @Test func aWriteThatThrowsInAGroupUndoesOnlyItsOwnWritesAndFailsAlone() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        struct Refused: Error, Equatable { var thread: Int }
        let environment = try open()
        let database = try environment.database(named: "things", create: true)!
        let runs = Lock<[Int: Int]>([:])
        let outcomes = try Self.queuedBehindABusyWriter(environment, count: 12) { thread, txn in
            runs.withLock { $0[thread, default: 0] += 1 }
            // Written before the throw: undone with the shared transaction, which the others redo.
            try txn.put([UInt8(thread)], for: Self.key(thread), in: database)
            try txn.put([UInt8(thread)], for: Self.key(1_000 + thread), in: database)
            if thread % 3 == 1 { throw Refused(thread: thread) }
        }
        for (thread, outcome) in outcomes.enumerated() {
            let stored = try environment.read { txn in
                (
                    try txn.get(Self.key(thread), in: database).map(Array.init),
                    try txn.get(Self.key(1_000 + thread), in: database).map(Array.init)
                )
            }
            if thread % 3 == 1 {
                #expect(throws: Refused(thread: thread)) { try outcome.get() }
                #expect(stored.0 == nil && stored.1 == nil, "a failed write left \(thread)'s records")
            } else {
                #expect((try? outcome.get()) != nil)
                #expect(stored.0 == [UInt8(thread)] && stored.1 == [UInt8(thread)])
            }
        }
        // A failing body ran in a group and again alone, or only alone: one that the writes
        // after an earlier failure left last in the queue is a group of one. (Which bodies ran
        // grouped depends on the order the threads queued in; some did.)
        let counted = runs.withLock { $0 }
        let failing = (0..<12).filter { $0 % 3 == 1 }
        #expect(failing.allSatisfy { (1...2).contains(counted[$0]!) }, "runs: \(counted)")
        #expect(failing.contains { counted[$0]! == 2 }, "runs: \(counted)")
    }

    @Test func laterWritesOfAGroupSeeTheEarlierOnes() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        // Each write takes the next free number, as a save takes the log's next sequence.
        struct Taken: Error {}
        let environment = try open()
        let database = try environment.database(named: "counter", create: true)!
        _ = try Self.queuedBehindABusyWriter(environment, count: 16) { thread, txn in
            let last = try txn.withCursor(database) { cursor in try cursor.last().map { Array($0.key) } }
            let next = last.map { Int($0.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }) + 1 } ?? 0
            guard try txn.get(Self.key(next), in: database) == nil else { throw Taken() }
            try txn.put([UInt8(thread)], for: Self.key(next), in: database)
        }
        let keys = try environment.read { txn in
            var keys: [[UInt8]] = []
            try txn.withCursor(database) { cursor in
                var entry = try cursor.first()
                while let found = entry {
                    keys.append(Array(found.key))
                    entry = try cursor.next()
                }
            }
            return keys
        }
        #expect(keys == (0..<16).map(Self.key))
    }

    @Test func aGroupThatFillsTheMapIsWrittenWhole() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = try open(mapSize: 1 << 16)
        let database = try environment.database(named: "things", create: true)!
        let before = environment.mapSize
        let outcomes = try Self.queuedBehindABusyWriter(environment, count: 16) { thread, txn in
            for index in 0..<100 {
                let value = [UInt8](repeating: UInt8(thread), count: 1_000)
                try txn.put(value, for: Self.key(thread * 1_000 + index), in: database)
            }
        }
        #expect(outcomes.allSatisfy { (try? $0.get()) != nil })
        #expect(environment.mapSize > before)
        let count = try environment.read { try $0.count(of: database) }
        #expect(count == 1_600)
    }

    /// Four grouped writes queued behind a busy writer; the first of their bodies to run starts
    /// `late` more writers, each writing with `lateBody`, and waits until they have queued: those
    /// arrive while the group's transaction is being written. Returns the late writes' outcomes.
    static func lateWritesWhileAGroupIsWritten(
        _ environment: Environment, late: Int, early: @escaping @Sendable (Int, WriteTransaction) throws -> Void,
        lateBody: @escaping @Sendable (Int, WriteTransaction) throws -> Void
    ) throws -> (early: [Result<Void, any Error>], late: [Result<Void, any Error>]) {
        let queueing = DispatchSemaphore(value: 0)
        let started = Lock(false)
        let finished = DispatchGroup()
        let outcomes = Lock<[Int: Result<Void, any Error>]>([:])
        let first = try queuedBehindABusyWriter(environment, count: 4) { thread, txn in
            try early(thread, txn)
            let starts = started.withLock { started in
                defer { started = true }
                return !started
            }
            guard starts else { return }
            startGroupedWriters(
                environment, count: late, queueing: queueing, outcomes: outcomes, finished: finished, lateBody)
            for _ in 0..<late { _ = queueing.wait(timeout: .now() + 10) }
            usleep(300_000)
        }
        finished.wait()
        return (first, outcomes.withLock { results in (0..<late).map { results[$0]! } })
    }

    @Test func writesQueuedWhileAGroupIsWrittenJoinItsTransaction() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = try open()
        let database = try environment.database(named: "things", create: true)!
        let transactions = Lock<[Int: UInt64]>([:])
        let outcomes = try Self.lateWritesWhileAGroupIsWritten(environment, late: 6) { thread, txn in
            transactions.withLock { $0[thread] = txn.transactionID }
            try txn.put([UInt8(thread)], for: Self.key(thread), in: database)
        } lateBody: { index, txn in
            transactions.withLock { $0[100 + index] = txn.transactionID }
            try txn.put([UInt8(index)], for: Self.key(100 + index), in: database)
        }
        #expect((outcomes.early + outcomes.late).allSatisfy { (try? $0.get()) != nil })
        // The late writes came while the group's transaction was being written, before its
        // commit: they are in it, one flush for all ten.
        let ids = transactions.withLock { $0 }
        #expect(ids.count == 10 && Set(ids.values).count == 1, "transactions by write: \(ids)")
        for index in Array(0..<4) + (100..<106) {
            #expect(try environment.read { try $0.get(Self.key(index), in: database) } != nil, "\(index)")
        }
    }

    @Test func aLateWriteThatThrowsInAGroupFailsAlone() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        struct Refused: Error, Equatable {}
        let environment = try open()
        let database = try environment.database(named: "things", create: true)!
        let outcomes = try Self.lateWritesWhileAGroupIsWritten(environment, late: 6) { thread, txn in
            try txn.put([UInt8(thread)], for: Self.key(thread), in: database)
        } lateBody: { index, txn in
            try txn.put([UInt8(index)], for: Self.key(100 + index), in: database)
            if index == 2 { throw Refused() }
        }
        #expect(outcomes.early.allSatisfy { (try? $0.get()) != nil })
        for (index, outcome) in outcomes.late.enumerated() {
            let stored = try environment.read { try $0.get(Self.key(100 + index), in: database).map(Array.init) }
            if index == 2 {
                #expect(throws: Refused()) { try outcome.get() }
                #expect(stored == nil, "the refused write left its record")
            } else {
                #expect((try? outcome.get()) != nil)
                #expect(stored == [UInt8(index)])
            }
        }
        for thread in 0..<4 {
            #expect(try environment.read { try $0.get(Self.key(thread), in: database) } != nil)
        }
    }
}
