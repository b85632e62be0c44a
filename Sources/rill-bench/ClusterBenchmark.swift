import Dispatch
import Foundation
import Rill
import RillJetStream
import RillLocks
import RillTorture

/// `rill-bench cluster`: three nodes on one log replicated by a three-server JetStream cluster
/// (R=3, loopback), beside the embedded log in the same run.
///
/// - saves/s from 1 writer (one node), then from 3 (one thread on each node at once; the
///   embedded log: three threads on one store);
/// - from `save()` returning on one node to a live query on another node being told of that
///   commit, p50 and p99 (the embedded log: a live query on the same store).
///
/// Every save is durable (``ModelConfiguration/Durability/full``) on both sides.
struct ClusterBenchmark {
    var savesPerWriter = 300
    var latencySamples = 300
    var rounds = 3

    func run() throws {
        let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "rill-bench-cluster-\(getpid())")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let cluster = try NATSCluster(root: scratch.appendingPathComponent("nats"), logs: scratch)
        try cluster.startAll()
        defer { cluster.stopAll() }
        print(
            "\nrill-bench cluster: 3 nats-servers (JetStream, R=3, loopback) and 3 nodes in this process; "
                + "\(rounds) rounds of \(savesPerWriter) saves a writer, \(latencySamples) latency samples\n")

        var (clusterOne, clusterThree, embeddedOne, embeddedThree) = ([Double](), [Double](), [Double](), [Double]())
        var clusterLatency: [Double] = []
        var embeddedLatency: [Double] = []
        for round in 0..<rounds {
            let stream = "bench\(round)"
            _ = try cluster.log(stream: stream)  // the cluster has a leader, and the stream its three replicas
            let log = try ModelConfiguration.ReplicatedLog.jetStream(servers: cluster.urls, stream: stream)
            let nodes = try (0..<3).map { index in
                try ModelContainer(
                    for: Item.self,
                    configurations: ModelConfiguration(
                        url: scratch.appendingPathComponent("r\(round)-node\(index)"), log: log))
            }
            let embedded = try ModelContainer(
                for: Item.self,
                configurations: ModelConfiguration(url: scratch.appendingPathComponent("r\(round)-embedded")))

            clusterOne.append(Self.savesPerSecond([nodes[0]], savesPerWriter))
            embeddedOne.append(Self.savesPerSecond([embedded], savesPerWriter))
            clusterThree.append(Self.savesPerSecond(nodes, savesPerWriter))
            embeddedThree.append(Self.savesPerSecond([embedded, embedded, embedded], savesPerWriter))
            try Self.settle(nodes)
            let records = try nodes.map { try ModelContext($0).fetchCount(FetchDescriptor<Item>()) }
            precondition(Set(records).count == 1, "the nodes hold different records: \(records)")

            clusterLatency += try Self.notificationDelays(saving: nodes[0], told: nodes[1], latencySamples / rounds)
            embeddedLatency += try Self.notificationDelays(saving: embedded, told: embedded, latencySamples / rounds)
            print(
                String(
                    format: "round %d: 1 writer %.0f vs embedded %.0f saves/s; 3 writers %.0f vs %.0f saves/s",
                    round + 1, clusterOne.last!, embeddedOne.last!, clusterThree.last!, embeddedThree.last!))
        }

        var table = ComparisonTable(
            title: "\nthe log in JetStream (3 servers, R=3) beside the embedded log", baselineName: "embedded")
        table.rillName = "cluster"
        table.note =
            "ratio: cluster ÷ embedded (saves/s: median of the rounds' ratios; delays: of the percentiles over all samples); "
            + "a delay runs from save() returning on one node to a live query of another node being told of the commit "
            + "(embedded: a live query of the same store)"
        let (c50, c99) = (Self.percentile(clusterLatency, 0.5), Self.percentile(clusterLatency, 0.99))
        let (e50, e99) = (Self.percentile(embeddedLatency, 0.5), Self.percentile(embeddedLatency, 0.99))
        table.rows = [
            .init(
                name: "durable saves, 1 writer", rill: PairedSamples.median(clusterOne),
                baseline: PairedSamples.median(embeddedOne), unit: "saves/s", higherIsBetter: true, target: "reference",
                ratio: PairedSamples.median(zip(clusterOne, embeddedOne).map { $0 / $1 })),
            .init(
                name: "durable saves, 3 writers (a node each)", rill: PairedSamples.median(clusterThree),
                baseline: PairedSamples.median(embeddedThree), unit: "saves/s", higherIsBetter: true,
                target: "reference", ratio: PairedSamples.median(zip(clusterThree, embeddedThree).map { $0 / $1 })),
            .init(
                name: "saved → told on another node, p50", rill: c50 * 1000, baseline: e50 * 1000, unit: "ms",
                higherIsBetter: false, target: "reference", ratio: c50 / e50),
            .init(
                name: "saved → told on another node, p99", rill: c99 * 1000, baseline: e99 * 1000, unit: "ms",
                higherIsBetter: false, target: "reference", ratio: c99 / e99),
        ]
        print(table.render())
    }

    /// Saves per second, all writers together: one thread for each container of `writers` (a
    /// container may be listed more than once), each saving `count` items one by one.
    static func savesPerSecond(_ writers: [ModelContainer], _ count: Int) -> Double {
        Double(writers.count * count) / ConcurrentSaves.timeSaves(writers, count)
    }

    /// Seconds from each of `samples` saves on `saving` returning to a live query on `told` being
    /// told of its commit.
    static func notificationDelays(saving: ModelContainer, told: ModelContainer, _ samples: Int) throws -> [Double] {
        try settle([saving, told])
        let arrivals = Lock<[UInt64: Double]>([:])
        let live = try LiveQuery(FetchDescriptor<Item>(), in: told)
        let observation = live.observe(on: DispatchQueue(label: "rill-bench.cluster.observer")) { change in
            let time = now()
            arrivals.withLock { $0[change.sequence] = time }
        }
        defer { observation.cancel() }
        let context = ModelContext(saving)
        var delays: [Double] = []
        for index in 0..<samples {
            context.insert(Item.random(1_000_000 + index))
            try context.save()
            let saved = now()
            let sequence = try saving.lastSequence()
            let deadline = saved + 10
            var arrival: Double?
            while arrival == nil, now() < deadline {
                arrival = arrivals.withLock { $0[sequence] }
                if arrival == nil { usleep(20) }
            }
            guard let arrival else { throw BenchmarkFailure("commit \(sequence) was not told within 10 s") }
            delays.append(arrival - saved)
        }
        return delays
    }

    /// Waits until every container has applied the commits of the others.
    static func settle(_ containers: [ModelContainer]) throws {
        let deadline = now() + 30
        while now() < deadline {
            let heads = try containers.map { try $0.lastSequence() }
            if Set(heads).count == 1 { return }
            usleep(1000)
        }
        throw BenchmarkFailure("the nodes did not reach one commit within 30 s")
    }

    /// The `fraction` percentile of `values` (nearest rank).
    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
    }
}

/// A benchmark that could not measure what it set out to.
struct BenchmarkFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
