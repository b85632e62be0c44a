import Foundation
import Rill
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `rill-bench serve`: the built `rill serve` with many Server-Sent Event subscribers, each on a
/// query of its own, while writers save as fast as they can over HTTP. Beside it, in the same
/// run, the same queries as live queries in one process and the same saves through the library:
/// what the daemon and its sockets add.
struct ServeBenchmark {
    var subscribers = 100
    var records = 10_000
    var seconds = 10.0
    var writers = 4

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

        // The daemon.
        let served = scratch.appendingPathComponent("served")
        let servedIDs = try populate(served)
        let daemon = Process()
        daemon.executableURL = executable
        daemon.arguments = ["serve", served.path, "--log-level", "warning"]
        try daemon.run()
        let socket = served.appendingPathComponent("rill.sock").path
        while !FileManager.default.fileExists(atPath: socket), daemon.isRunning { usleep(10_000) }
        usleep(100_000)
        let result = try runServed(socket: socket, ids: servedIDs)
        kill(daemon.processIdentifier, SIGTERM)
        daemon.waitUntilExit()
        print(
            String(
                format: "served:     %.0f saves/s, %d events, p50 %.2f ms, p99 %.2f ms, resets %d, daemon exit %d",
                result.savesPerSecond, result.latencies.count, percentile(result.latencies, 0.5) * 1000,
                percentile(result.latencies, 0.99) * 1000, result.resets, daemon.terminationStatus))

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
        var latencies: [Double]
        var resets = 0
    }

    private func runInProcess(_ directory: URL, ids: [UUID]) throws -> Outcome {
        let container = try ModelContainer(for: Item.self, configurations: ModelConfiguration(url: directory))
        let received = Mutex<[(sequence: UInt64, time: Double)]>([])
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
        let acknowledged = Mutex<[UInt64: Double]>([:])
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

    private func runServed(socket: String, ids: [UUID]) throws -> Outcome {
        let received = Mutex<[(sequence: UInt64, time: Double)]>([])
        let resets = Atomic<Int>(0)
        let ready = Atomic<Int>(0)
        var connections: [Int32] = []
        for index in 0..<subscribers {
            let fd = try connectUnix(socket)
            connections.append(fd)
            let encoded = query(index).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            sendAll(fd, "GET /v1/subscribe?q=\(encoded) HTTP/1.1\r\nHost: rill\r\n\r\n")
            Thread {
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                var pending = ""
                var current: (name: String, id: UInt64) = ("", 0)
                while true {
                    let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    guard count > 0 else { return }
                    let time = now()
                    pending += String(decoding: buffer[0..<count], as: UTF8.self)
                    while let newline = pending.firstIndex(of: "\n") {
                        let line = pending[..<newline]
                        if line.hasPrefix("event: ") { current.name = String(line.dropFirst(7)) }
                        if line.hasPrefix("id: ") { current.id = UInt64(line.dropFirst(4)) ?? 0 }
                        if line.isEmpty, current.id > 0 {
                            if current.name == "change" {
                                received.withLock { $0.append((current.id, time)) }
                            } else if current.name == "reset" {
                                resets.add(1, ordering: .relaxed)
                            } else if current.name == "results" {
                                ready.add(1, ordering: .relaxed)
                            }
                            current = ("", 0)
                        }
                        pending.removeSubrange(...newline)
                    }
                }
            }.start()
        }
        // Every subscriber has its initial results before the saves start.
        let deadline = now() + 60
        while ready.load(ordering: .relaxed) < subscribers, now() < deadline { usleep(10_000) }
        let acknowledged = Mutex<[UInt64: Double]>([:])
        let start = now()
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<writers {
            let fd = try connectUnix(socket)
            Thread {
                defer { done.signal() }
                var random = SystemRandomNumberGenerator()
                var buffer = [UInt8](repeating: 0, count: 4096)
                while now() - start < seconds {
                    let id = ids.randomElement(using: &random)!
                    let body =
                        #"[{"op":"update","entity":"Item","record":{"id":"\#(id)","quantity":\#(Int.random(in: 0..<1000, using: &random)),"price":\#(Double(Int.random(in: 0..<10_000, using: &random)) / 100)}}]"#
                    sendAll(
                        fd, "POST /v1/save HTTP/1.1\r\nHost: rill\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
                    // The response is small: one read holds it.
                    let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    guard count > 0 else { return }
                    let time = now()
                    let text = String(decoding: buffer[0..<count], as: UTF8.self)
                    guard let range = text.range(of: #""seq":"#) else { continue }
                    let digits = text[range.upperBound...].prefix { $0.isNumber }
                    if let sequence = UInt64(digits) { acknowledged.withLock { $0[sequence] = time } }
                }
                close(fd)
            }.start()
        }
        for _ in 0..<writers { done.wait() }
        let elapsed = now() - start
        usleep(1_000_000)
        for fd in connections { shutdown(fd, Int32(SHUT_RDWR)) }
        let acks = acknowledged.withLock { $0 }
        let latencies = received.withLock { $0 }.compactMap { event in
            acks[event.sequence].map { max(0, event.time - $0) }
        }
        return Outcome(
            savesPerSecond: Double(acks.count) / elapsed, latencies: latencies, resets: resets.load(ordering: .relaxed))
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
        let bytes = Array(text.utf8)
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
