import Foundation
import Rill
import RillJetStream
import RillTestSupport
import RillWorkloads
import Testing

/// Containers configured with a replicated log, as an app's nodes would open them.
@Suite(.enabled(if: NATSServer.executable != nil, "nats-server is not installed"))
struct ReplicatedContainerTests {
    static func container(
        _ directory: TemporaryDirectory, _ name: String, log: ModelConfiguration.ReplicatedLog
    )
        throws -> ModelContainer
    {
        try ModelContainer(
            for: Counter.self,
            configurations: ModelConfiguration(url: URL(fileURLWithPath: directory.path(name)), log: log))
    }

    static func all(_ container: ModelContainer) throws -> [Counter] {
        try ModelContext(container).fetch(FetchDescriptor<Counter>(sortBy: [SortDescriptor(\.id)]))
    }

    /// Waits until every container has applied the log's last commit, `last`.
    static func settle(_ containers: [ModelContainer], at last: () throws -> UInt64) throws {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let target = try last()
            if try containers.allSatisfy({ try $0.lastSequence() == target }) { return }
            Thread.sleep(forTimeInterval: 0.02)
        }
        Issue.record("the nodes did not reach the log's last commit: \(try containers.map { try $0.lastSequence() })")
    }

    @Test func nodesSavingConcurrentlySeeOneHistory() throws {
        let server = try NATSServer()
        let directory = TemporaryDirectory()
        let probe = try server.whenReady { try JetStreamLog(servers: [server.url], stream: "counters", timeout: 2) }
        let log = try ModelConfiguration.ReplicatedLog.jetStream(
            servers: [server.url], stream: "counters", replicas: 1, timeout: 2)
        let nodes = [try Self.container(directory, "a", log: log), try Self.container(directory, "b", log: log)]
        let descriptor = FetchDescriptor<Counter>(
            predicate: #Predicate { $0.value >= 10 }, sortBy: [SortDescriptor(\.value), SortDescriptor(\.id)])
        let live = try LiveQuery(descriptor, in: nodes[1])

        let seed = UInt64.random(in: 0...UInt64.max)
        print("nodesSavingConcurrentlySeeOneHistory seed \(seed)")
        DispatchQueue.concurrentPerform(iterations: nodes.count) { index in
            var random = SeededGenerator(seed: seed &+ UInt64(index))
            let context = ModelContext(nodes[index])
            for _ in 0..<40 {
                let id = Int.random(in: 0..<16, using: &random)
                if Int.random(in: 0..<5, using: &random) == 0 {
                    context.delete(Counter(id: id, value: 0))
                } else {
                    context.insert(Counter(id: id, value: Int.random(in: 0..<30, using: &random)))
                }
                do { try context.save() } catch { Issue.record("node \(index): \(error)") }
            }
        }
        try Self.settle(nodes, at: probe.last)
        let records = try Self.all(nodes[0])
        #expect(try Self.all(nodes[1]) == records)
        // The live query on b holds what a fresh fetch on a finds: b's commits and a's alike.
        let deadline = Date().addingTimeInterval(10)
        while live.results.sequence < (try nodes[1].lastSequence()), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(Array(live.results) == (try ModelContext(nodes[0]).fetch(descriptor)))
        #expect(nodes.allSatisfy { $0.replicationFailure == nil })
    }

    @Test func aNodeNoServerAnswersReadsItsStoreAndRefusesSaves() throws {
        let directory = TemporaryDirectory()
        let port = try NATSServer.unusedPort()
        let log = try ModelConfiguration.ReplicatedLog.jetStream(
            servers: ["127.0.0.1:\(port)"], stream: "counters", replicas: 1, timeout: 1)
        let node = try Self.container(directory, "a", log: log)
        #expect(try Self.all(node).isEmpty)
        let context = ModelContext(node)
        context.insert(Counter(id: 1, value: 1))
        do {
            try context.save()
            Issue.record("a save with no server answering succeeded")
        } catch let error as RillError {
            #expect(error.code == .replicationUnavailable, "\(error)")
        }
        #expect(try node.lastSequence() == 0)
        #expect(try Self.all(node).isEmpty)
        #expect(node.replicationFailure == nil)
    }

    @Test func aContainerThatMayNotSaveRefusesALog() throws {
        let directory = TemporaryDirectory()
        let log = try ModelConfiguration.ReplicatedLog.jetStream("nats://127.0.0.1:1/counters")
        do {
            _ = try ModelContainer(
                for: Counter.self,
                configurations: ModelConfiguration(
                    url: URL(fileURLWithPath: directory.path("a")), allowsSave: false, log: log))
            Issue.record("a read-only container opened on a replicated log")
        } catch let error as RillError {
            #expect(error.code == .invalidConfiguration, "\(error)")
        }
    }

    @Test func configurationsAreEqualWhenTheirLogsAre() throws {
        let url = URL(fileURLWithPath: "/tmp/x")
        let one = ModelConfiguration(url: url, log: try .jetStream("nats://n1:4222,n2/books"))
        let same = ModelConfiguration(
            url: url, log: try .jetStream(servers: ["nats://n1", "n2:4222"], stream: "books", replicas: 2))
        let other = ModelConfiguration(url: url, log: try .jetStream("nats://n1:4222,n2/books?replicas=1"))
        #expect(one == same)
        #expect(one.hashValue == same.hashValue)
        #expect(one != other)
        #expect(one != ModelConfiguration(url: url))
        #expect(one.log?.name == "nats://n1:4222,n2:4222/books")
    }
}
