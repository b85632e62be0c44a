import Foundation
import Rill
import RillLocks
import RillTestSupport
import Testing

/// A save whose append the replicated log leaves unanswered: sent again with the same id, kept once.
struct ReplicaAppendRetryTests {
    /// A log in memory that keeps each id once, as JetStream does, and loses the answers it is told to.
    final class MemoryReplica: LogReplica {
        enum Outcome {
            /// Dropped, unanswered.
            case dropped
            /// Kept, unanswered.
            case answerLost
        }

        struct State {
            var entries: [[UInt8]] = []
            var sequences: [String: UInt64] = [:]
            /// What the next appends meet, in order; an append beyond the script is kept and answered.
            var script: [Outcome] = []
            var ids: [String] = []
        }
        let state = Lock(State())
        let name = "memory"

        func last() throws -> UInt64 { state.withLock { UInt64($0.entries.count) } }

        func append(_ entry: [UInt8], after sequence: UInt64, id: String) throws -> UInt64? {
            try state.withLock { state in
                state.ids.append(id)
                let outcome = state.script.isEmpty ? nil : state.script.removeFirst()
                if outcome == .dropped { throw RillError(.replicationUnavailable, "dropped") }
                if let first = state.sequences[id] { return first }
                guard UInt64(state.entries.count) == sequence else { return nil }
                state.entries.append(entry)
                state.sequences[id] = UInt64(state.entries.count)
                if outcome == .answerLost { throw RillError(.replicationUnavailable, "unanswered") }
                return UInt64(state.entries.count)
            }
        }

        func entry(_ sequence: UInt64) throws -> [UInt8]? {
            state.withLock { state in
                sequence >= 1 && sequence <= UInt64(state.entries.count) ? state.entries[Int(sequence - 1)] : nil
            }
        }

        func follow(from sequence: UInt64) throws -> any LogReplicaFeed {
            throw RillError(.replicationUnavailable, "this log is read by sequence only")
        }
    }

    static func store(_ directory: TemporaryDirectory, _ replica: MemoryReplica) throws -> Store {
        let store = try Store(directory: directory.path("a"), options: StoreOptions(), create: true, replica: replica)
        _ = try store.registerEntity(named: "Item", identifierKind: .string)
        return store
    }

    static func save(_ store: Store) throws {
        _ = try ReplicatedStoreTests.save(store, #"{"op":"insert","entity":"Item","id":"x","record":{"name":"x"}}"#)
    }

    @Test func anAppendWhoseAnswerWasLostIsKeptOnce() throws {
        let replica = MemoryReplica()
        let store = try Self.store(TemporaryDirectory(), replica)
        replica.state.withLock { $0.script = [.answerLost] }
        try Self.save(store)
        #expect(try store.head() == 1)
        let state = replica.state.withLock { $0 }
        #expect(state.entries.count == 1)
        #expect(state.ids.count == 2 && Set(state.ids).count == 1, "\(state.ids)")
        #expect(try store.entries(after: 0, limit: 1).first?.encoded == state.entries.first)
    }

    @Test func aLogThatNeverAnswersFailsTheSaveAndWritesNothing() throws {
        let replica = MemoryReplica()
        let store = try Self.store(TemporaryDirectory(), replica)
        replica.state.withLock { $0.script = Array(repeating: .dropped, count: 100) }
        ReplicatedStoreTests.failure(.replicationUnavailable, "a save no log answered succeeded") {
            try Self.save(store)
        }
        #expect(try store.head() == 0)
        let state = replica.state.withLock { $0 }
        #expect(state.entries.isEmpty)
        #expect(state.ids.count == 4 && Set(state.ids).count == 1, "\(state.ids)")
    }

    @Test func aCommitWhoseAnswersWereAllLostIsAppliedFromTheLog() throws {
        let replica = MemoryReplica()
        let store = try Self.store(TemporaryDirectory(), replica)
        replica.state.withLock { $0.script = [.answerLost] + Array(repeating: .dropped, count: 100) }
        ReplicatedStoreTests.failure(.replicationUnavailable, "a save with every answer lost succeeded") {
            try Self.save(store)
        }
        #expect(try store.head() == 0)
        replica.state.withLock { $0.script = [] }
        try store.catchUpWithReplica()
        #expect(try store.head() == 1)
        #expect(try store.entries(after: 0, limit: 1).first?.encoded == replica.state.withLock { $0.entries.first })
    }

    @Test func aStoreFoundToDisagreeWithItsLogSavesNoMore() throws {
        let replica = MemoryReplica()
        let store = try Self.store(TemporaryDirectory(), replica)
        try Self.save(store)
        // The log's commit 1 is not the store's any more (its servers lost it, another took its place).
        replica.state.withLock { $0.entries[0] = $0.entries[0].reversed() }
        ReplicatedStoreTests.failure(.replicationDiverged, "a store unlike its log caught up") {
            try store.catchUpWithReplica()
        }
        ReplicatedStoreTests.failure(.replicationDiverged, "a store found unlike its log saved") {
            try Self.save(store)
        }
        #expect(replica.state.withLock { $0.entries.count } == 1)
        #expect(try store.head() == 1)
    }
}
