// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Rill",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Rill", targets: ["Rill"]),
        // A store's log replicated in NATS JetStream (`ModelConfiguration(…, log: .jetStream(…))`); links libnats.
        .library(name: "RillJetStream", targets: ["RillJetStream"]),
        // The command-line tool: its target is named apart from `Rill` (the two would differ only by
        // case), its product and binary stay `rill`.
        .executable(name: "rill", targets: ["RillCommandLine"]),
        // The fault shim of the reliability suites, loaded with LD_PRELOAD into a process under test.
        .library(name: "RillFaultShim", type: .dynamic, targets: ["RillFaultShim"]),
    ],
    targets: [
        // LMDB from the system (Debian: liblmdb-dev).
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"])]
        ),
        // SQLite from the system (Debian: libsqlite3-dev): the benchmarks' peer only. The library
        // never links it.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // The official NATS C client from the system (Debian: libnats-dev), with JetStream: the replicated log's
        // transport. Only `NATSJetStream` speaks it.
        .systemLibrary(
            name: "CNATS",
            pkgConfig: "libnats",
            providers: [.apt(["libnats-dev"])]
        ),
        // Streams, publishes with an expected last sequence, reads and ordered consumers of JetStream: no
        // store, no domain words.
        .target(name: "NATSJetStream", dependencies: ["CNATS"]),
        // A store's log replicated in a JetStream stream: the adapter between `Rill` and `NATSJetStream`, so that
        // the library itself links no NATS.
        .target(name: "RillJetStream", dependencies: ["Rill", "NATSJetStream", "RillLocks"]),
        // The sample of the README and `make demo`.
        .executableTarget(name: "library-demo", dependencies: ["Rill"], path: "Samples/Library"),
        // The settings sample: a default instance, changed, found again.
        .executableTarget(name: "settings-demo", dependencies: ["Rill"], path: "Samples/Settings"),
        // The tasks sample: a fetched-results list kept current, a search, an indexed journal.
        .executableTarget(name: "tasks-demo", dependencies: ["Rill"], path: "Samples/Tasks"),
        .executableTarget(name: "recipes-demo", dependencies: ["Rill"], path: "Samples/Recipes"),
        // The read-write lock of the storage layer's resize gate and of the log follower's publication.
        .target(name: "RillLocks"),
        // The only module that speaks LMDB.
        .target(name: "RillStorage", dependencies: ["CLMDB", "RillLocks"]),
        // Cache prefetch hints (`__builtin_prefetch`), for loads that walk large tables.
        .target(name: "CPrefetch"),
        .target(name: "Rill", dependencies: ["RillStorage", "RillLocks", "CPrefetch"]),
        // The wire protocol of Documentation/Protocol.md: saves from JSON, queries, results, changes,
        // subscription events, errors as JSON and HTTP statuses. The daemon, its client and the CLI speak it.
        .target(name: "RillService", dependencies: ["Rill"]),
        // HTTP/1.1 requests and responses, Unix and TCP sockets: no store, no domain words.
        .target(name: "RillHTTP"),
        // The daemon: a store served over HTTP and Server-Sent Events (`rill serve`).
        .target(name: "RillServer", dependencies: ["Rill", "RillHTTP", "RillLocks", "RillService"]),
        // The client of the daemon's event streams (`rill watch --connect`).
        .target(name: "RillClient", dependencies: ["RillHTTP", "RillService"]),
        .executableTarget(
            name: "RillCommandLine",
            dependencies: [
                "Rill", "RillService", "RillHTTP", "RillLocks", "RillServer", "RillClient", "RillJetStream",
            ]),
        // Benchmarks compare Rill with raw LMDB doing the same work, so they reach below the storage
        // layer, and with SQLite, the peer, doing it through its C API; `cluster` starts the cluster
        // suite's nats-servers (RillTorture's `NATSCluster`).
        .executableTarget(
            name: "rill-bench",
            dependencies: [
                "Rill", "CLMDB", "CSQLite", "RillLocks", "RillWorkloads", "RillJetStream", "RillTorture",
            ]),
        // The models and seeded generators that the benchmarks share with the tests: not test code.
        .target(name: "RillWorkloads", dependencies: ["Rill"]),

        // The reliability suites (`rill-torture`, `make torture`): crash, power-cut, full-disk,
        // I/O-error, hostile-client and cluster runs, each ended by a full verification of the store.
        .target(
            name: "RillTorture",
            dependencies: ["Rill", "RillHTTP", "RillJetStream", "RillLocks", "RillService", "RillWorkloads"]),
        .executableTarget(name: "rill-torture", dependencies: ["RillTorture"]),
        // Journals or fails the writes and flushes of chosen files (C, for LD_PRELOAD).
        .target(name: "RillFaultShim", linkerSettings: [.linkedLibrary("dl")]),
        // The fuzzing targets (`make fuzz`): each reads one input and throws when an oracle fails.
        // `rill-fuzz` runs them under libFuzzer (built with -sanitize=fuzzer) or replays inputs.
        .target(name: "RillFuzzTargets", dependencies: ["Rill", "RillHTTP", "RillLocks"]),
        .executableTarget(name: "rill-fuzz", dependencies: ["RillFuzzTargets"]),

        // Helpers shared by the tests and the test helper process: temporary stores, test models,
        // the built `rill` and `rill serve` as processes, a raw HTTP client.
        .target(
            name: "RillTestSupport", dependencies: ["Rill", "RillWorkloads", "RillHTTP", "RillLocks"],
            path: "Tests/RillTestSupport"),
        // A child process the tests spawn, kill and inspect (durability under SIGKILL, several writers).
        .executableTarget(
            name: "rill-test-helper",
            dependencies: ["Rill", "RillLocks", "RillWorkloads", "RillTestSupport"],
            path: "Tests/RillTestHelper"
        ),
        // A test target per module; those that run the built `rill` depend on it.
        .testTarget(name: "RillLocksTests", dependencies: ["RillLocks"]),
        .testTarget(name: "NATSJetStreamTests", dependencies: ["NATSJetStream", "RillTestSupport", "RillWorkloads"]),
        .testTarget(
            name: "RillJetStreamTests",
            dependencies: ["Rill", "RillJetStream", "RillLocks", "RillTestSupport", "RillWorkloads"]),
        .testTarget(name: "RillStorageTests", dependencies: ["RillStorage", "RillLocks"]),
        .testTarget(
            name: "RillTests",
            dependencies: [
                "Rill", "RillStorage", "RillLocks", "RillWorkloads", "RillTestSupport", "rill-test-helper",
                "RillCommandLine",
            ]
        ),
        .testTarget(
            name: "RillServiceTests", dependencies: ["Rill", "RillService", "RillWorkloads", "RillTestSupport"]),
        .testTarget(name: "RillHTTPTests", dependencies: ["RillHTTP", "RillWorkloads", "RillTestSupport"]),
        .testTarget(
            name: "RillServerTests",
            dependencies: [
                "Rill", "RillServer", "RillHTTP", "RillLocks", "RillWorkloads", "RillTestSupport", "rill-test-helper",
                "RillCommandLine", "RillService",
            ]
        ),
        .testTarget(
            name: "RillClientTests",
            dependencies: ["RillClient", "RillHTTP", "RillLocks", "RillService", "RillWorkloads", "RillTestSupport"]),
        .testTarget(
            name: "RillReliabilityTests",
            dependencies: [
                "Rill", "RillTorture", "RillWorkloads", "RillTestSupport", "rill-torture", "rill-test-helper",
                "RillCommandLine", "RillFaultShim", "RillFuzzTargets",
            ]
        ),
        .testTarget(
            name: "RillCommandLineTests",
            dependencies: [
                "Rill", "RillStorage", "RillLocks", "RillService", "RillWorkloads", "RillTestSupport",
                "rill-test-helper",
                "RillCommandLine", "library-demo", "settings-demo", "tasks-demo", "recipes-demo",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// A file sees the members of only the modules it imports itself, not those that its imports bring in: a
// layer that does not import `RillStorage` cannot reach an environment, a transaction or a cursor by accident.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [.enableUpcomingFeature("MemberImportVisibility")]
}
