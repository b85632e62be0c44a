import Foundation
import Rill
import RillJetStream
import RillWorkloads

#if canImport(Glibc)
    import Glibc
#endif

/// A Rill node of the cluster suite, a process of its own:
/// `rill-torture worker cluster-node <store> <journal> <node> <incarnation> --servers URL,… --stream NAME
/// --control DIR [--queries N] [--pause SECONDS] [--seed N]`.
///
/// It opens its store on the stream (a `JetStreamLog` over every server, three replicas), catches
/// up, follows the log (`ReplicaFollower`), holds the run's live queries (``ClusterQuery/all(count:seed:)``)
/// and saves random inserts, updates and deletes of ``ClusterItem``s, journaling each fact
/// (``ClusterJournal``) before it goes on. Once the file `stop` appears in the control directory
/// it saves no more (`idle`); once `end` appears, holding the stream's last commit, it waits until
/// its store and every live query have reached that commit, journals `end` and exits.
package enum ClusterNode {
    package static func run(_ arguments: [String]) throws {
        guard arguments.count >= 4, let node = Int(arguments[2]), let incarnation = Int(arguments[3]) else {
            throw TortureUsage(
                "usage: rill-torture worker cluster-node <store> <journal> <node> <incarnation> --servers URL,… "
                    + "--stream NAME --control DIR [--queries N] [--pause SECONDS] [--seed N]")
        }
        let options = TortureArguments(Array(arguments.dropFirst(4)))
        guard let servers = options.value("--servers")?.split(separator: ",").map(String.init),
            let stream = options.value("--stream"), let control = options.value("--control")
        else { throw TortureUsage("cluster-node needs --servers, --stream and --control") }
        let seed = options.value("--seed").flatMap(UInt64.init) ?? 1
        let pause = options.value("--pause").flatMap(Double.init) ?? 0.02
        let journal = try ClusterJournal(path: arguments[1])
        do {
            try serve(
                store: arguments[0], journal: journal, node: node, incarnation: incarnation, servers: servers,
                stream: stream, control: control, queries: options.integer("--queries") ?? 50, pause: pause, seed: seed)
        } catch {
            var line = ClusterJournal.Line(kind: "failure")
            line.message = "node \(node): \(error)"
            journal.append(line)
            throw error
        }
    }

    private static func serve(
        store directory: String, journal: ClusterJournal, node: Int, incarnation: Int, servers: [String],
        stream: String, control: String, queries count: Int, pause: Double, seed: UInt64
    ) throws {
        let log = try retrying("connecting to the stream") {
            try JetStreamLog(servers: servers, stream: stream, replicas: 3, timeout: 3)
        }
        let store = try Store(directory: directory, options: StoreOptions(), create: true, replica: log)
        try ClusterItem.register(in: store)
        try retrying("catching up with the stream") { try store.catchUpWithReplica() }
        var start = ClusterJournal.Line(kind: "start")
        start.incarnation = incarnation
        start.sequence = try store.head()
        journal.append(start)
        let follower = ReplicaFollower(store)
        let liveQueries = try ClusterQuery.all(count: count, seed: seed).enumerated().map { index, query in
            try RecordLiveQuery(try QueryParser.parse(query.text), store: store) { event in
                if let line = ClusterJournal.line(of: event, query: index) { journal.append(line) }
            }
        }
        var saver = ClusterSaver(
            store: store, journal: journal, node: node, incarnation: incarnation,
            seed: seed &+ UInt64(node) &* 7919 &+ UInt64(incarnation) &* 104_729)
        let stopFile = control + "/stop"
        while !FileManager.default.fileExists(atPath: stopFile) {
            if let failure = follower.failure { throw failure }
            saver.saveOnce()
            if pause > 0 { usleep(UInt32(pause * 1_000_000)) }
        }
        journal.append(ClusterJournal.Line(kind: "idle"))
        // The stream's last commit, once every node is idle.
        let endFile = control + "/end"
        let deadline = Date().addingTimeInterval(180)
        var last: UInt64?
        while last == nil, Date() < deadline {
            last = (try? String(contentsOfFile: endFile, encoding: .utf8)).flatMap {
                UInt64($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            if last == nil { usleep(20_000) }
        }
        guard let last else { throw TortureUsage("no \(endFile) came within 180 s") }
        while try store.head() < last {
            if let failure = follower.failure { throw failure }
            guard Date() < deadline else {
                throw TortureUsage("the store stayed at commit \(try store.head()) of \(last) for 180 s")
            }
            usleep(10_000)
        }
        for query in liveQueries { try query.catchUp() }
        var end = ClusterJournal.Line(kind: "end")
        end.sequence = try store.head()
        journal.append(end)
        withExtendedLifetime(follower) {}
    }

    /// `body`'s result once it stops failing as `.replicationUnavailable` (the cluster is still
    /// electing its leaders, or the server this node reached is down), within 60 s.
    static func retrying<T>(_ doing: String, _ body: () throws -> T) throws -> T {
        let deadline = Date().addingTimeInterval(60)
        while true {
            do {
                return try body()
            } catch let error as RillError where error.code == .replicationUnavailable && Date() < deadline {
                usleep(200_000)
            } catch {
                throw TortureUsage("\(doing) failed: \(error)")
            }
        }
    }
}
