import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The processes of the kill suite on one store, each of which it kills and starts again: two
/// writer processes, a `rill watch --json` of the store, and `rill serve` under the load of a
/// ``DaemonWriter``, followed by a `rill watch --connect --retry` (an SSE subscriber that resumes
/// with `Last-Event-ID` whenever the daemon comes back).
final class KillFleet {
    /// What the suite kills.
    enum Target: String, CaseIterable {
        case writer0 = "writer 0"
        case writer1 = "writer 1"
        case watch
        case daemon
    }

    let store: String
    let oracle: WatchOracle
    private let options: TortureOptions
    private let logs: URL
    private var writers: [LineProcess?] = [nil, nil]
    private var writerStarts = [0, 0]
    /// The acknowledged saves of the writer processes that ended (the running ones' are in
    /// their lines).
    private var finishedSaves: [AcknowledgedSave] = []
    private var watch: LineProcess?
    private(set) var watchTranscript = WatchTranscript(name: "rill watch")
    private var daemon: LineProcess?
    private var subscriber: LineProcess?
    private(set) var subscriberTranscript = WatchTranscript(name: "rill watch --connect")
    private var daemonWriter: DaemonWriter?
    /// Saves sent to the daemon that got no response.
    private(set) var unansweredSaves = 0

    var socket: String { store + "/rill.sock" }

    /// Seconds each writer waits between saves: at most about 100 saves a second each, so that
    /// the store, and the verification after each kill, stay small on any machine.
    static let pause = 0.01

    init(store: String, logs: URL, options: TortureOptions) {
        self.store = store
        self.logs = logs
        self.options = options
        oracle = WatchOracle(writer: 0, limit: 10)
    }

    deinit { stopAll() }

    // MARK: - Starting

    /// Starts every process, the daemon first, and waits until each is serving.
    func startAll() throws {
        try start(.daemon)
        try start(.writer0)
        try start(.writer1)
        try start(.watch)
        subscriber = try LineProcess(
            options.product("rill"),
            ["watch", "--connect", socket, "--json", "--retry", "--progress", "1", oracle.text],
            log: logs.appendingPathComponent("subscriber.log").path)
        let writer = DaemonWriter(socket: socket, writer: 2, seed: options.seed, pause: Self.pause)
        writer.start()
        daemonWriter = writer
    }

    /// Starts `target` (again): a writer with its own number, the watch resuming after the last
    /// sequence it printed, the daemon on the same socket.
    func start(_ target: Target) throws {
        switch target {
        case .writer0, .writer1:
            let number = target == .writer0 ? 0 : 1
            writerStarts[number] += 1
            writers[number] = try LineProcess(
                options.product("rill-torture"),
                [
                    "worker", "writer", store, String(number), "--pause", String(Self.pause), "--seed",
                    String(options.seed &+ UInt64(number * 1000 + writerStarts[number])),
                ],
                log: logs.appendingPathComponent("writer\(number).log").path)
        case .watch:
            var arguments = ["watch", store, oracle.text, "--json", "--progress", "1"]
            if let last = watchTranscript.last { arguments += ["--since", String(last)] }
            watch = try LineProcess(
                options.product("rill"), arguments, log: logs.appendingPathComponent("watch.log").path)
        case .daemon:
            let daemon = try LineProcess(
                options.product("rill"), ["serve", store, "--progress", "1", "--log-level", "warning"],
                log: logs.appendingPathComponent("daemon.log").path)
            self.daemon = daemon
            try waitUntilServing(daemon)
        }
    }

    /// Waits until the daemon answers `GET /v1/health`.
    private func waitUntilServing(_ daemon: LineProcess) throws {
        let client = DaemonClient(socket: socket)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if client.request("GET", "/v1/health")?.status == 200 { return }
            guard daemon.isRunning else { throw TortureUsage("rill serve exited at start (see daemon.log)") }
            usleep(10_000)
        }
        throw TortureUsage("rill serve did not answer within 30 s")
    }

    // MARK: - Killing

    /// The process of `target`, when it runs.
    func process(_ target: Target) -> LineProcess? {
        switch target {
        case .writer0: writers[0]
        case .writer1: writers[1]
        case .watch: watch
        case .daemon: daemon
        }
    }

    /// Sends SIGKILL to `target` and takes in what it printed before it died; returns its pid.
    @discardableResult
    func kill(_ target: Target) -> Int32? {
        guard let process = process(target) else { return nil }
        let pid = process.pid
        process.stop(SIGKILL)
        finish(target, process)
        return pid
    }

    /// Takes in the lines of a process that ended.
    private func finish(_ target: Target, _ process: LineProcess) {
        switch target {
        case .writer0, .writer1:
            finishedSaves += process.lines.compactMap(TortureWriter.acknowledged)
            writers[target == .writer0 ? 0 : 1] = nil
        case .watch:
            watchTranscript.add(run: process.lines)
            watch = nil
        case .daemon:
            daemon = nil
        }
    }

    /// Every save acknowledged so far, by the writer processes and through the daemon.
    var acknowledged: [AcknowledgedSave] {
        finishedSaves + writers.compactMap { $0 }.flatMap { $0.lines.compactMap(TortureWriter.acknowledged) }
            + (daemonWriter?.acknowledged ?? [])
    }

    // MARK: - Ending

    /// Stops the writers, then waits (up to 30 s) until both watchers printed a line at or past
    /// the log's last commit, then stops them and the daemon. Each is stopped with SIGKILL: a
    /// process started by a test runner may inherit SIGTERM ignored, and what each printed is
    /// whole lines either way.
    func finish(lastCommit: () throws -> UInt64) rethrows {
        stopDaemonWriter()
        for target in [Target.writer0, .writer1] {
            if let process = process(target) {
                process.stop(SIGKILL)
                finish(target, process)
            }
        }
        let last = try lastCommit()
        func reached(_ lines: [String]) -> Bool {
            lines.contains { line in
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    let sequence = (object["seq"] as? NSNumber)?.uint64Value
                else { return false }
                return sequence >= last
            }
        }
        _ = watch?.wait(timeout: 30, until: reached)
        _ = subscriber?.wait(timeout: 30, until: reached)
        if let watch {
            watch.stop(SIGKILL)
            finish(.watch, watch)
        }
        if let subscriber {
            subscriber.stop(SIGKILL)
            subscriberTranscript.add(run: subscriber.lines)
            self.subscriber = nil
        }
        if let daemon {
            daemon.stop(SIGKILL)
            finish(.daemon, daemon)
        }
    }

    private func stopDaemonWriter() {
        guard let writer = daemonWriter else { return }
        writer.stop()
        finishedSaves += writer.acknowledged
        unansweredSaves = writer.unanswered
        daemonWriter = nil
    }

    /// Kills whatever still runs (a suite that threw half-way).
    func stopAll() {
        stopDaemonWriter()
        for process in writers.compactMap({ $0 }) + [watch, daemon, subscriber].compactMap({ $0 }) {
            process.stop(SIGKILL)
        }
    }
}
