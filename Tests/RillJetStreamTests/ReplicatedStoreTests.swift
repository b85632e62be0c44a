import Dispatch
import Foundation
import Rill
import RillJetStream
import RillLocks
import RillTestSupport
import RillWorkloads
import Testing

/// Stores in one process sharing one log in a JetStream stream, as nodes would.
@Suite(.enabled(if: NATSServer.executable != nil, "nats-server is not installed"))
struct ReplicatedStoreTests {
    /// A node: its own store directory, on the shared stream.
    static func node(_ directory: TemporaryDirectory, _ name: String, server: NATSServer) throws -> Store {
        let log = try server.whenReady { try JetStreamLog(servers: [server.url], stream: "items", timeout: 2) }
        let store = try Store(directory: directory.path(name), options: StoreOptions(), create: true, replica: log)
        _ = try store.registerEntity(
            named: "Item", identifierKind: .string, indexes: [[["name"]]], uniqueness: ["name": .fail])
        try store.catchUpWithReplica()
        return store
    }

    static func save(_ store: Store, _ json: String) throws -> LogEntry? {
        let change = try JSONChange(json: JSONReader.parse(Array(json.utf8)))
        return try store.commit(try store.prepare([change]), author: nil)
    }

    /// Waits until every store's head is the log's last commit.
    static func settle(_ stores: [Store], log: JetStreamLog) throws {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let last = try log.last()
            if try stores.allSatisfy({ try $0.head() == last }) { return }
            Thread.sleep(forTimeInterval: 0.02)
        }
        Issue.record("the stores did not reach the log's last commit: \(try stores.map { try $0.head() })")
    }

    /// The error `body` throws, when it has `code`; records an issue (`otherwise`) when it throws none.
    @discardableResult
    static func failure(_ code: RillError.Code, _ otherwise: Comment, _ body: () throws -> Void) -> RillError? {
        do {
            try body()
            Issue.record(otherwise)
        } catch let error as RillError {
            #expect(error.code == code, "\(error)")
            return error
        } catch {
            Issue.record("not a RillError: \(error)")
        }
        return nil
    }

    static func records(_ store: Store) throws -> [[UInt8]: [UInt8]] {
        var records: [[UInt8]: [UInt8]] = [:]
        try store.forEachRecord(of: try store.existingEntity("Item")) { key, record in
            records[Array(key)] = Array(record)
            return true
        }
        return records
    }

    @Test func concurrentSavesOnTwoNodesMakeOneLog() throws {
        let server = try NATSServer()
        let directory = TemporaryDirectory()
        let stores = [try Self.node(directory, "a", server: server), try Self.node(directory, "b", server: server)]
        let followers = stores.map { ReplicaFollower($0) }
        let log = try server.whenReady { try JetStreamLog(servers: [server.url], stream: "items", timeout: 2) }

        // A live query on b, told of a's commits too.
        let changes = Lock<[UInt64]>([])
        let live = try RecordLiveQuery(Query(entity: "Item"), store: stores[1]) { event in
            if case .change(let change) = event { changes.withLock { $0.append(change.sequence) } }
        }
        let seed = SeededGenerator(label: "ReplicatedStoreTests").seed
        let acknowledged = Lock<[UInt64]>([])
        let failures = Lock<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            var generator = SeededGenerator(seed: seed &+ UInt64(worker))
            let store = stores[worker % 2]
            for _ in 0..<40 {
                let id = "i\(generator.next() % 30)"
                // Names repeat across records: some saves break the unique index, on whichever node.
                let name = "n\(generator.next() % 60)"
                let json =
                    generator.next() % 5 == 0
                    ? #"{"op":"delete","entity":"Item","id":"\#(id)"}"#
                    : #"{"op":"insert","entity":"Item","id":"\#(id)","record":{"name":"\#(name)","n":\#(generator.next() % 1000)}}"#
                do {
                    if let entry = try Self.save(store, json) { acknowledged.withLock { $0.append(entry.sequence) } }
                } catch let error as RillError where error.code == .uniqueConflict {
                    continue
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        try Self.settle(stores, log: log)
        for follower in followers { #expect(follower.failure == nil) }

        // One log: every acknowledged save is in it, once, and both nodes hold it entry for entry.
        let last = try log.last()
        let sequences = acknowledged.withLock { $0 }
        print("ReplicatedStoreTests: \(sequences.count) saves acknowledged, \(last) commits in the log")
        #expect(sequences.count == Int(last), "every commit of the log is a save some node had acknowledged")
        #expect(Set(sequences).count == sequences.count)
        #expect(sequences.allSatisfy { $0 >= 1 && $0 <= last })
        let entries = try stores.map { try $0.entries(after: 0) }
        #expect(entries[0].map(\.encoded) == entries[1].map(\.encoded))
        #expect(entries[0].count == Int(last))
        for (offset, entry) in entries[0].enumerated() {
            #expect(try log.entry(UInt64(offset + 1)) == entry.encoded)
        }
        // The same records, and each store's projections and indexes are a replay of its log.
        #expect(try Self.records(stores[0]) == Self.records(stores[1]))
        for store in stores {
            let report = try store.check()
            #expect(report.isHealthy, "\(report.problems)")
        }
        // b's live query was told of every commit that changed its results, in order, once each.
        let told = changes.withLock { $0 }
        #expect(told == told.sorted() && Set(told).count == told.count)
        #expect(told.last == entries[1].last(where: { $0.changes.contains { $0.entity == "Item" } })?.sequence)
        withExtendedLifetime(live) {}
    }

    @Test func aSaveThatLostTheRaceIsValidatedAgainstTheWinner() throws {
        let server = try NATSServer()
        let directory = TemporaryDirectory()
        // No followers: b learns of a's commit only when its own save is refused.
        let a = try Self.node(directory, "a", server: server)
        let b = try Self.node(directory, "b", server: server)
        _ = try Self.save(a, #"{"op":"insert","entity":"Item","id":"a1","record":{"name":"x"}}"#)
        #expect(try b.head() == 0)
        Self.failure(.uniqueConflict, "b's save broke the unique name it validated before a's commit") {
            _ = try Self.save(b, #"{"op":"insert","entity":"Item","id":"b1","record":{"name":"x"}}"#)
        }
        // b caught up on the way, and a save that still holds goes in after a's.
        #expect(try b.head() == 1)
        let entry = try Self.save(b, #"{"op":"insert","entity":"Item","id":"b1","record":{"name":"y"}}"#)
        #expect(entry?.sequence == 2)
        try a.catchUpWithReplica()
        #expect(try Self.records(a) == Self.records(b))
        #expect(try a.entries(after: 0).map(\.encoded) == b.entries(after: 0).map(\.encoded))
    }

    @Test func aStoreThatFollowsALogRefusesSavesMadeWithoutIt() throws {
        let server = try NATSServer()
        let directory = TemporaryDirectory()
        let node = try Self.node(directory, "a", server: server)
        _ = try Self.save(node, #"{"op":"insert","entity":"Item","id":"a1","record":{"name":"x"}}"#)
        // The same file opened as a plain store (another process, `rill write`): it reads, and may not save.
        let plain = try Store(directory: directory.path("a"), options: StoreOptions(), create: false)
        #expect(try plain.head() == 1)
        let refusal = Self.failure(.readOnly, "a save without the replicated log went into a store that follows it") {
            _ = try Self.save(plain, #"{"op":"insert","entity":"Item","id":"a2","record":{"name":"y"}}"#)
        }
        #expect(refusal?.message.contains("items") == true, "\(String(describing: refusal))")
        #expect(try plain.head() == 1)
        #expect(try node.head() == 1)
    }

    @Test func aStoreWhoseLastCommitIsNotTheLogsIsRefused() throws {
        let server = try NATSServer()
        let directory = TemporaryDirectory()
        let node = try Self.node(directory, "a", server: server)
        _ = try Self.save(node, #"{"op":"insert","entity":"Item","id":"a1","record":{"name":"x"}}"#)
        // Another store with a commit 1 of its own.
        let other = try Store(directory: directory.path("b"), options: StoreOptions(), create: true)
        _ = try other.registerEntity(named: "Item", identifierKind: .string)
        _ = try Self.save(other, #"{"op":"insert","entity":"Item","id":"b1","record":{"name":"y"}}"#)
        let log = try server.whenReady { try JetStreamLog(servers: [server.url], stream: "items", timeout: 2) }
        let joined = try Store(directory: directory.path("b"), options: StoreOptions(), create: false, replica: log)
        Self.failure(.replicationDiverged, "a store whose commit 1 is not the log's followed it") {
            try joined.catchUpWithReplica()
        }
        // The node whose commit it is still follows it.
        try node.catchUpWithReplica()
    }

    @Test func aStoreAheadOfItsLogIsRefused() throws {
        let server = try NATSServer()
        let directory = TemporaryDirectory()
        // A store with commits of its own, then put on an empty stream.
        let plain = try Store(directory: directory.path("a"), options: StoreOptions(), create: true)
        _ = try plain.registerEntity(named: "Item", identifierKind: .string)
        _ = try Self.save(plain, #"{"op":"insert","entity":"Item","id":"a1","record":{"name":"x"}}"#)
        let log = try server.whenReady { try JetStreamLog(servers: [server.url], stream: "items", timeout: 2) }
        let replicated = try Store(directory: directory.path("a"), options: StoreOptions(), create: false, replica: log)
        Self.failure(.replicationDiverged, "a store holding commit 1 followed an empty log") {
            try replicated.catchUpWithReplica()
        }
    }
}
