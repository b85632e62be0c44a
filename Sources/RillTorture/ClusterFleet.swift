import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The Rill nodes of the cluster suite, each a `rill-torture worker cluster-node` process with its
/// own store and journal, which the suite kills with SIGKILL and starts again (a new incarnation:
/// the same store and journal).
final class ClusterFleet {
    let root: URL
    let count: Int
    private let options: TortureOptions
    private let servers: [String]
    private let stream: String
    private let queries: Int
    private let pause: Double
    private var processes: [LineProcess?]
    private(set) var incarnations: [Int]

    init(
        root: URL, count: Int = 3, options: TortureOptions, servers: [String], stream: String, queries: Int,
        pause: Double
    ) throws {
        self.root = root
        self.count = count
        self.options = options
        self.servers = servers
        self.stream = stream
        self.queries = queries
        self.pause = pause
        processes = Array(repeating: nil, count: count)
        incarnations = Array(repeating: 0, count: count)
        try FileManager.default.createDirectory(at: control, withIntermediateDirectories: true)
        for node in 0..<count {
            try FileManager.default.createDirectory(
                at: root.appendingPathComponent("node-\(node)"), withIntermediateDirectories: true)
        }
    }

    deinit { stopAll() }

    /// The directory of the `stop` and `end` files the nodes watch.
    var control: URL { root.appendingPathComponent("control") }

    func store(_ node: Int) -> String { root.appendingPathComponent("node-\(node)/store").path }
    func journal(_ node: Int) -> String { root.appendingPathComponent("node-\(node)/journal.ndjson").path }

    /// Starts every node.
    func startAll() throws {
        for node in 0..<count { try start(node) }
    }

    /// Starts node `node` (again), as its next incarnation.
    func start(_ node: Int) throws {
        incarnations[node] += 1
        processes[node] = try LineProcess(
            options.product("rill-torture"),
            [
                "worker", "cluster-node", store(node), journal(node), String(node), String(incarnations[node]),
                "--servers", servers.joined(separator: ","), "--stream", stream, "--control", control.path,
                "--queries", String(queries), "--pause", String(pause), "--seed", String(options.seed),
            ],
            log: root.appendingPathComponent("node-\(node)/stderr.log").path)
    }

    /// Sends SIGKILL to node `node`; returns its pid.
    @discardableResult
    func kill(_ node: Int) -> Int32? {
        guard let process = processes[node] else { return nil }
        let pid = process.pid
        process.stop(SIGKILL)
        processes[node] = nil
        return pid
    }

    /// The nodes that are no longer running, with their exit status.
    var exited: [(node: Int, status: Int32)] {
        processes.enumerated().compactMap { node, process in
            guard let process, !process.isRunning else { return nil }
            return (node, process.waitForExit())
        }
    }

    /// Tells the nodes to stop saving.
    func stopSaving() throws {
        try Data().write(to: control.appendingPathComponent("stop"))
    }

    /// Tells the nodes the stream's last commit, which each waits for before it ends.
    func end(at last: UInt64) throws {
        let temporary = control.appendingPathComponent("end.tmp")
        try Data("\(last)\n".utf8).write(to: temporary)
        // Renamed into place: a node never reads half of it.
        _ = rename(temporary.path, control.appendingPathComponent("end").path)
    }

    /// Waits (up to `timeout` seconds) for every node to exit by itself; returns the exit status of
    /// each, nil for one still running (then killed).
    func waitForExit(timeout: Double) -> [Int32?] {
        let deadline = Date().addingTimeInterval(timeout)
        while processes.contains(where: { $0?.isRunning == true }), Date() < deadline { usleep(20_000) }
        return (0..<count).map { node in
            guard let process = processes[node] else { return nil }
            defer { processes[node] = nil }
            guard !process.isRunning else {
                process.stop(SIGKILL)
                return nil
            }
            return process.waitForExit()
        }
    }

    /// Kills whatever still runs.
    func stopAll() {
        for node in 0..<count { kill(node) }
    }
}
