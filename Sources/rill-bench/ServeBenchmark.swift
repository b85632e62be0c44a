import Foundation
import Rill
import RillLocks
import RillWorkloads
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `rill-bench serve`: the built `rill serve` with many Server-Sent Event subscribers, each on a
/// query of its own, while writers save as fast as they can over HTTP. Beside it, in the same
/// run, the same queries as live queries in one process and the same saves through the library:
/// what the daemon and its sockets add. Then the same over TCP beside the Unix socket, with one
/// writer and with several: what TCP adds.
struct ServeBenchmark {
    var subscribers = 100
    var records = 10_000
    var seconds = 10.0
    var writers = 16
    /// Rounds of TCP and the Unix socket, back to back.
    var transportRounds = 3

    /// The query of subscriber `index`: a band of quantities, sorted, windowed.
    func query(_ index: Int) -> String {
        let low = (index * 997) % 950
        return "Item where quantity >= \(low) and quantity < \(low + 50) sort by price desc limit 20"
    }

    func run() throws {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("rill")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            FileHandle.standardError.write(
                Data("rill-bench serve needs the rill executable beside it: swift build -c release\n".utf8))
            exit(1)
        }
        let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("rill-bench-\(UUID())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        print(
            "rill-bench serve: \(records) records, \(subscribers) subscribers on different queries, "
                + "\(writers) writers saving for \(Int(seconds)) s\n")

        // Baseline: the same queries and saves inside one process.
        let local = scratch.appendingPathComponent("local")
        let ids = try populate(local)
        let baseline = try runInProcess(local, ids: ids)
        print(
            String(
                format: "in process: %.0f saves/s, %d notifications, p50 %.2f ms, p99 %.2f ms", baseline.savesPerSecond,
                baseline.latencies.count, percentile(baseline.latencies, 0.5) * 1000,
                percentile(baseline.latencies, 0.99) * 1000))

        // The daemon, on its Unix socket and on TCP.
        let served = scratch.appendingPathComponent("served")
        let servedIDs = try populate(served)
        let port = try freeTCPPort()
        let token = UUID().uuidString
        let daemon = Process()
        daemon.executableURL = executable
        daemon.arguments = ["serve", served.path, "--log-level", "warning", "--listen", "127.0.0.1:\(port)"]
        daemon.environment = ProcessInfo.processInfo.environment.merging(["RILL_TOKEN": token]) { $1 }
        try daemon.run()
        let socket = served.appendingPathComponent("rill.sock").path
        while !FileManager.default.fileExists(atPath: socket), daemon.isRunning { usleep(10_000) }
        usleep(100_000)
        let unix = Transport(name: "unix socket", connect: { try connectUnix(socket) }, header: "")
        let tcp = Transport(
            name: "tcp", connect: { try connectTCP(port) }, header: "Authorization: Bearer \(token)\r\n")
        let result = try runServed(unix, writers: writers, seconds: seconds, ids: servedIDs)
        report(result, transport: unix, writers: writers)
        // TCP beside the Unix socket: short runs of each, back to back, in rounds that alternate
        // which goes first, so that the disk's and the machine's moods fall on both alike.
        let roundSeconds = max(2, seconds / 3)
        var pairs: [(writers: Int, tcp: Outcome, unix: Outcome)] = []
        for round in 0..<transportRounds {
            for count in [1, writers] {
                var outcomes: [String: Outcome] = [:]
                for transport in round % 2 == 0 ? [unix, tcp] : [tcp, unix] {
                    let outcome = try runServed(transport, writers: count, seconds: roundSeconds, ids: servedIDs)
                    report(outcome, transport: transport, writers: count)
                    outcomes[transport.name] = outcome
                }
                pairs.append((count, outcomes[tcp.name]!, outcomes[unix.name]!))
            }
        }
        kill(daemon.processIdentifier, SIGTERM)
        daemon.waitUntilExit()
        print("daemon exit \(daemon.terminationStatus)")

        var table = ComparisonTable(
            title: "\nserve (\(subscribers) SSE subscribers, \(writers) HTTP writers, durable saves)",
            baselineName: "in process")
        table.rows = [
            .init(
                name: "saves", rill: result.savesPerSecond, baseline: baseline.savesPerSecond, unit: "saves/s",
                higherIsBetter: true, target: "reported", ratio: result.savesPerSecond / baseline.savesPerSecond),
            .init(
                name: "p50 save acknowledged → event received", rill: percentile(result.latencies, 0.5) * 1000,
                baseline: percentile(baseline.latencies, 0.5) * 1000, unit: "ms", higherIsBetter: false,
                target: "reported", ratio: nil),
            .init(
                name: "p99 save acknowledged → event received", rill: percentile(result.latencies, 0.99) * 1000,
                baseline: percentile(baseline.latencies, 0.99) * 1000, unit: "ms", higherIsBetter: false,
                target: "reported", ratio: nil),
        ]
        table.note =
            "in process: the same saves through ModelContext.save() and the same queries as live queries, "
            + "save() returned → handler called"
        print(table.render())

        var transports = ComparisonTable(
            title:
                "serve over TCP beside the Unix socket (\(subscribers) SSE subscribers, durable saves, "
                + "\(transportRounds) rounds of \(Int(roundSeconds)) s each)",
            baselineName: "unix socket")
        transports.rillName = "tcp"
        for count in [1, writers] {
            let rounds = pairs.filter { $0.writers == count }
            let label = count == 1 ? "1 writer" : "\(count) writers"
            // Each column the median over rounds; the ratio the median of the rounds' ratios.
            func row(
                _ name: String, unit: String, higherIsBetter: Bool, _ value: (Outcome) -> Double
            )
                -> ComparisonTable.Row
            {
                .init(
                    name: "\(label): \(name)", rill: median(rounds.map { value($0.tcp) }),
                    baseline: median(rounds.map { value($0.unix) }), unit: unit, higherIsBetter: higherIsBetter,
                    target: higherIsBetter ? "≥ 0.67×" : "≤ 1.5×",
                    ratio: median(rounds.map { value($0.tcp) / value($0.unix) }))
            }
            transports.rows += [
                row("saves", unit: "saves/s", higherIsBetter: true) { $0.savesPerSecond },
                row("p50 save round trip", unit: "ms", higherIsBetter: false) {
                    percentile($0.roundTrips, 0.5) * 1000
                },
                row("p99 save round trip", unit: "ms", higherIsBetter: false) {
                    percentile($0.roundTrips, 0.99) * 1000
                },
                row("p50 save acknowledged → event received", unit: "ms", higherIsBetter: false) {
                    percentile($0.latencies, 0.5) * 1000
                },
            ]
        }
        transports.note =
            "ratio: median over rounds of tcp ÷ unix socket, each pair measured back to back on the same daemon; "
            + "save round trip: request sent → response read by the writer"
        print(transports.render())

        // The peer: SQLite with as many writer threads, each saving one record per transaction: the
        // faster of a connection per thread and one connection the threads take turns on.
        let concurrent = ConcurrentSaves()
        var peer = ComparisonTable(
            title: "serve beside SQLite (WAL, synchronous=FULL, in process)", baselineName: "SQLite")
        for count in [1, writers] {
            let rates = (0..<transportRounds).map { round in
                let path = scratch.appendingPathComponent("sqlite-\(count)-\(round)").path
                guard count > 1 else { return concurrent.sqlite(writers: 1, path: path + ".sqlite") }
                return max(
                    concurrent.sqlite(writers: count, path: path + "-each.sqlite"),
                    concurrent.sqliteSharingOneConnection(writers: count, path: path + "-shared.sqlite"))
            }
            let served = median(pairs.filter { $0.writers == count }.map { $0.unix.savesPerSecond })
            peer.rows.append(
                .init(
                    name: "\(count == 1 ? "1 writer" : "\(count) writers"): durable saves of 1 record",
                    rill: served, baseline: median(rates), unit: "saves/s", higherIsBetter: true,
                    target: count == 1 ? "reported" : "≥ 1×", ratio: served / median(rates)))
        }
        peer.note =
            "rill: the daemon's saves over the Unix socket above (median over rounds), each an HTTP request; "
            + "SQLite: \(concurrent.savesPerWriter) inserts per thread, median of \(transportRounds) runs, no "
            + "HTTP in between; with many threads the faster of a connection per thread and one connection in turns"
        print(peer.render())
        // Each round measures 1 writer, then many, on both transports: the ratio of each round's
        // pair, over both transports, so that the disk's drift over the run cancels out.
        let ones = pairs.filter { $0.writers == 1 }
        let manys = pairs.filter { $0.writers == writers }
        let ratios = zip(ones, manys).flatMap { one, many in
            [many.unix.savesPerSecond / one.unix.savesPerSecond, many.tcp.savesPerSecond / one.tcp.savesPerSecond]
        }
        print(
            String(
                format: "daemon, %d writers ÷ 1 writer: %.2f× (target ≥ 6×; median of %d same-round pairs: %@)",
                writers, median(ratios), ratios.count,
                ratios.map { String(format: "%.1f", $0) }.joined(separator: ", ")))
    }

    private func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }

    /// How the benchmark's clients reach the daemon.
    struct Transport {
        var name: String
        var connect: () throws -> Int32
        /// Headers every request carries (the token over TCP).
        var header: String
    }

    private func report(_ outcome: Outcome, transport: Transport, writers: Int) {
        print(
            String(
                format:
                    "served:     %@, %d writer(s): %.0f saves/s, %@ saves a flush, round trip p50 %.2f ms; %d events, p50 %.2f ms, p99 %.2f ms, resets %d",
                transport.name, writers, outcome.savesPerSecond,
                outcome.savesPerTransaction.map { String(format: "%.1f", $0) } ?? "?",
                percentile(outcome.roundTrips, 0.5) * 1000, outcome.latencies.count,
                percentile(outcome.latencies, 0.5) * 1000, percentile(outcome.latencies, 0.99) * 1000, outcome.resets))
    }

    private func populate(_ directory: URL) throws -> [UUID] {
        let container = try ModelContainer(for: Item.self, configurations: ModelConfiguration(url: directory))
        let items = (0..<records).map(Item.random)
        for item in items { container.mainContext.insert(item) }
        try container.mainContext.save()
        return items.map(\.id)
    }

    struct Outcome {
        var savesPerSecond: Double
        /// Save acknowledged → event received, per event.
        var latencies: [Double]
        /// Request sent → response read, per save.
        var roundTrips: [Double] = []
        var resets = 0
        /// Commits ÷ write transactions over the run, from the daemon's `/metrics`: how many
        /// saves a flush carried (nil in process, or when a scrape failed).
        var savesPerTransaction: Double? = nil
    }

    private func runInProcess(_ directory: URL, ids: [UUID]) throws -> Outcome {
        let container = try ModelContainer(for: Item.self, configurations: ModelConfiguration(url: directory))
        let received = Lock<[(sequence: UInt64, time: Double)]>([])
        var queries: [RecordLiveQuery] = []
        for index in 0..<subscribers {
            let query = try QueryParser.parse(query(index))
            queries.append(
                try RecordLiveQuery(query, store: container.store) { event in
                    if case .change(let change) = event {
                        let time = now()
                        received.withLock { $0.append((change.sequence, time)) }
                    }
                })
        }
        let acknowledged = Lock<[UInt64: Double]>([:])
        let start = now()
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<writers {
            Thread { [seconds, records] in
                defer { done.signal() }
                let context = ModelContext(container)
                var random = SystemRandomNumberGenerator()
                while now() - start < seconds {
                    var item = Item.random(Int.random(in: 0..<records, using: &random))
                    item.id = ids.randomElement(using: &random)!
                    context.insert(item)
                    guard let sequence = try? context.save() else { continue }
                    let time = now()
                    acknowledged.withLock { $0[sequence] = time }
                }
            }.start()
        }
        for _ in 0..<writers { done.wait() }
        let elapsed = now() - start
        try queries.first?.catchUp()
        let acks = acknowledged.withLock { $0 }
        let latencies = received.withLock { $0 }.compactMap { event in
            acks[event.sequence].map { max(0, event.time - $0) }
        }
        withExtendedLifetime(queries) {}
        return Outcome(savesPerSecond: Double(acks.count) / elapsed, latencies: latencies)
    }

    private func runServed(_ transport: Transport, writers: Int, seconds: Double, ids: [UUID]) throws -> Outcome {
        let received = Lock<[(sequence: UInt64, time: Double)]>([])
        let resets = Atomic<Int>(0)
        let ready = Atomic<Int>(0)
        var connections: [Int32] = []
        for index in 0..<subscribers {
            let fd = try transport.connect()
            connections.append(fd)
            let encoded = query(index).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            sendAll(fd, "GET /v1/subscribe?q=\(encoded) HTTP/1.1\r\nHost: rill\r\n\(transport.header)\r\n")
            Thread {
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                var reader = EventReader()
                while true {
                    let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    guard count > 0 else { return }
                    let time = now()
                    buffer.withUnsafeBytes { bytes in
                        reader.read(UnsafeRawBufferPointer(rebasing: bytes[0..<count])) { event in
                            switch event {
                            case .change(let sequence): received.withLock { $0.append((sequence, time)) }
                            case .reset: resets.add(1, ordering: .relaxed)
                            case .results: ready.add(1, ordering: .relaxed)
                            case .other: break
                            }
                        }
                    }
                }
            }.start()
        }
        // Every subscriber has its initial results before the saves start.
        let deadline = now() + 60
        while ready.load(ordering: .relaxed) < subscribers, now() < deadline { usleep(10_000) }
        let acknowledged = Lock<[UInt64: Double]>([:])
        let roundTrips = Lock<[Double]>([])
        let countsBefore = try? commitCounts(transport)
        let start = now()
        let done = DispatchSemaphore(value: 0)
        let header = transport.header
        let idBytes = ids.map { Array($0.uuidString.utf8) }
        for _ in 0..<writers {
            let fd = try transport.connect()
            let seed = UInt64.random(in: 1...UInt64.max)
            Thread {
                defer { done.signal() }
                var requests = SaveRequests(ids: idBytes, header: header, seed: seed)
                var buffer = [UInt8](repeating: 0, count: 4096)
                while now() - start < seconds {
                    let request = requests.next()
                    let sent = now()
                    sendAll(fd, request)
                    // The response is small: one read holds it.
                    let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    guard count > 0 else { return }
                    let time = now()
                    roundTrips.withLock { $0.append(time - sent) }
                    let sequence = buffer.withUnsafeBytes {
                        Self.acknowledgedSequence(in: UnsafeRawBufferPointer(rebasing: $0[0..<count]))
                    }
                    if let sequence { acknowledged.withLock { $0[sequence] = time } }
                }
                close(fd)
            }.start()
        }
        for _ in 0..<writers { done.wait() }
        let elapsed = now() - start
        let countsAfter = try? commitCounts(transport)
        usleep(1_000_000)
        for fd in connections { shutdown(fd, Int32(SHUT_RDWR)) }
        let acks = acknowledged.withLock { $0 }
        let latencies = received.withLock { $0 }.compactMap { event in
            acks[event.sequence].map { max(0, event.time - $0) }
        }
        var perTransaction: Double?
        if let countsBefore, let countsAfter, countsAfter.transactions > countsBefore.transactions {
            perTransaction =
                Double(countsAfter.commits - countsBefore.commits)
                / Double(countsAfter.transactions - countsBefore.transactions)
        }
        return Outcome(
            savesPerSecond: Double(acks.count) / elapsed, latencies: latencies, roundTrips: roundTrips.withLock { $0 },
            resets: resets.load(ordering: .relaxed), savesPerTransaction: perTransaction)
    }

    /// The daemon's commits and write transactions so far, from `GET /metrics`.
    private func commitCounts(_ transport: Transport) throws -> (commits: UInt64, transactions: UInt64) {
        let fd = try transport.connect()
        defer { close(fd) }
        sendAll(fd, "GET /metrics HTTP/1.1\r\nHost: rill\r\n\(transport.header)Connection: close\r\n\r\n")
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 14)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            response.append(contentsOf: buffer[0..<count])
        }
        var counts: [String: UInt64] = [:]
        for line in String(decoding: response, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = UInt64(parts[1]) { counts[String(parts[0])] = value }
        }
        guard let commits = counts["rill_commits_total"], let transactions = counts["rill_write_transactions_total"]
        else { throw POSIXError(.EPROTO) }
        return (commits, transactions)
    }

    /// A connection to 127.0.0.1:`port`, with Nagle's algorithm off as in every client of Rill's.
    private func connectTCP(_ port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else {
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        var yes: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    private func connectUnix(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return fd
    }

    private func sendAll(_ fd: Int32, _ text: String) {
        sendAll(fd, Array(text.utf8))
    }

    private func sendAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent <= 0 { return }
            offset += sent
        }
    }

    private func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }
}
