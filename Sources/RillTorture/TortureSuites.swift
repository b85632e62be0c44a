/// Every reliability suite, by the name `rill-torture` takes, in the order `rill-torture all` runs them.
package enum TortureSuites {
    package typealias Run = @Sendable (TortureOptions) throws -> TortureReport

    package static let all: [(name: String, run: Run)] = [
        ("kill", KillSuite.run),
        ("power-cut", PowerCutSuite.run),
        ("map-growth", MapGrowthSuite.run),
        ("disk-full", DiskFullSuite.run),
        ("io-error", IOErrorSuite.run),
        ("hostile", HostileClientSuite.run),
    ]

    /// The suites `rill-torture all` leaves out, each run by its own name: the soak (`make soak`), too
    /// long for `make torture`'s 20 minutes, and the cluster suite (`make cluster-test`).
    package static let long: [(name: String, run: Run)] = [
        ("soak", SoakSuite.run),
        // Three nats-servers and three nodes of a replicated log (`make cluster-test`): a suite of its own,
        // which needs nats-server.
        ("cluster", ClusterSuite.run),
    ]

    /// The worker roles the suites run as child processes (`rill-torture worker <role> …`).
    package static let workers: [(role: String, run: @Sendable ([String]) throws -> Void)] = [
        ("writer", TortureWriter.run),
        ("live-queries", LiveQueryWorker.run),
        ("journal-probe", JournalProbe.run),
        ("map-reader", MapGrowthReader.run),
        ("cluster-node", ClusterNode.run),
    ]
}
