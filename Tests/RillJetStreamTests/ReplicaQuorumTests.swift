import Foundation
import Rill
import RillJetStream
import RillTestSupport
import RillWorkloads
import Testing

/// A store on a three-server JetStream cluster whose stream loses its quorum: JetStream then
/// refuses requests as "temporarily unavailable" (error 10008) or "stream is offline", which
/// must reach the store as `.replicationUnavailable`, as a timeout does: saves fail typed (the
/// caller may try again), and the follower waits for the cluster instead of stopping.
@Suite(.enabled(if: NATSServer.executable != nil, "nats-server is not installed"))
struct ReplicaQuorumTests {
    /// Three servers' client and route ports, and their storage, which outlives each server.
    struct Cluster {
        let directory = TemporaryDirectory("rill-nats-cluster")
        let ports: [Int]
        let routePorts: [Int]

        init() throws {
            var chosen: Set<Int> = []
            while chosen.count < 6 { chosen.insert(try NATSServer.unusedPort()) }
            let sorted = Array(chosen)
            ports = Array(sorted[0..<3])
            routePorts = Array(sorted[3..<6])
        }

        var urls: [String] { ports.map { "nats://127.0.0.1:\($0)" } }

        func start(_ index: Int) throws -> NATSServer {
            try NATSServer(
                name: "nats-\(index + 1)", port: ports[index], routePort: routePorts[index],
                routes: routePorts.indices.filter { $0 != index }.map { routePorts[$0] },
                storage: directory.path("nats-\(index + 1)"))
        }
    }

    static func save(_ store: Store, _ id: String) throws -> LogEntry? {
        let json = #"{"op":"insert","entity":"Item","id":"\#(id)","record":{"name":"\#(id)"}}"#
        let change = try JSONChange(json: JSONReader.parse(Array(json.utf8)))
        return try store.commit(try store.prepare([change]), author: nil)
    }

    /// `body`'s result once it stops throwing, within `seconds`.
    static func eventually<T>(_ seconds: Double, _ body: () throws -> T) throws -> T {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            do {
                return try body()
            } catch  where Date() < deadline {
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
    }

    @Test func aStreamWithoutQuorumIsUnavailableAndTheFollowerWaitsForIt() throws {
        let cluster = try Cluster()
        var servers: [NATSServer?] = try (0..<3).map { try cluster.start($0) }
        let log = try Self.eventually(60) {
            try JetStreamLog(servers: cluster.urls, stream: "items", replicas: 3, timeout: 2)
        }
        let directory = TemporaryDirectory()
        let store = try Store(directory: directory.path("a"), options: StoreOptions(), create: true, replica: log)
        _ = try store.registerEntity(named: "Item", identifierKind: .string)
        try store.catchUpWithReplica()
        let follower = ReplicaFollower(store)
        _ = try Self.eventually(30) { try Self.save(store, "before") }

        // Two of three servers down: the one left answers, without a quorum.
        servers[1] = nil
        servers[2] = nil
        var codes: Set<RillError.Code> = []
        let deadline = Date().addingTimeInterval(8)
        while Date() < deadline {
            for request in [{ _ = try log.last() }, { _ = try log.entry(1) }, { _ = try Self.save(store, "during") }] {
                do {
                    try request()
                } catch let error as RillError {
                    codes.insert(error.code)
                    #expect(error.code == .replicationUnavailable, "\(error)")
                }
            }
        }
        #expect(codes == [.replicationUnavailable], "\(codes)")
        #expect(follower.failure == nil, "\(String(describing: follower.failure))")

        // Back: saves commit again, and the follower, still running, applies them.
        servers[1] = try cluster.start(1)
        servers[2] = try cluster.start(2)
        let after = try Self.eventually(60) { try Self.save(store, "after") }
        #expect(follower.failure == nil, "\(String(describing: follower.failure))")
        let last = try log.last()
        #expect(after.map { $0.sequence <= last } == true)
        _ = try Self.eventually(20) {
            guard try store.head() == log.last() else { throw TestSupportError("not caught up") }
        }
        let report = try store.check()
        #expect(report.isHealthy, "\(report.problems)")
        withExtendedLifetime((servers, follower)) {}
    }
}
