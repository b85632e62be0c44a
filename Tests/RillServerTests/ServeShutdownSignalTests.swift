import Foundation
import Rill
import RillTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A daemon told to stop the moment it can be seen: a SIGTERM sent as soon as its socket file
/// exists stops it cleanly (exit 0), never lost and never fatal. A subscriber that has stopped
/// reading does not hold the stop up.
@Suite struct ServeShutdownSignalTests {
    let directory = TemporaryDirectory()

    @Test func aSignalSentAsSoonAsTheSocketExistsStopsTheDaemon() throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = ModelContext(container)
        context.insert(Counter(id: 1, value: 1, payload: "p"))
        try context.save()
        let socket = path + "/rill.sock"
        for attempt in 0..<12 {
            let process = Process()
            process.executableURL = buildProductsDirectory.appendingPathComponent("rill")
            process.arguments = ["serve", path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            var deadline = Date().addingTimeInterval(20)
            while !FileManager.default.fileExists(atPath: socket), process.isRunning, Date() < deadline {
                usleep(200)
            }
            // Each attempt signals a little later after the socket appeared, to cross the start-up.
            usleep(UInt32(attempt * 300))
            kill(process.processIdentifier, attempt.isMultiple(of: 2) ? SIGTERM : SIGINT)
            deadline = Date().addingTimeInterval(20)
            while process.isRunning, Date() < deadline { usleep(1_000) }
            let stopped = !process.isRunning
            if !stopped {
                kill(process.processIdentifier, SIGKILL)
            }
            process.waitUntilExit()
            #expect(stopped, "attempt \(attempt): the signal was lost and the daemon served on")
            #expect(
                process.terminationReason == .exit && process.terminationStatus == 0,
                "attempt \(attempt): ended by \(process.terminationReason == .exit ? "exit" : "signal") \(process.terminationStatus)"
            )
            #expect(!FileManager.default.fileExists(atPath: socket), "attempt \(attempt): the socket was left behind")
        }
    }

    /// The bytes waiting in `fd`'s receive queue.
    static func pending(_ fd: Int32) -> Int {
        var count: Int32 = 0
        return withUnsafeMutablePointer(to: &count) { ioctl(fd, UInt(FIONREAD), $0) } == 0 ? Int(count) : -1
    }

    /// A subscriber that never reads while its events pile up — the socket's buffers full, the
    /// daemon's write to it blocked — is cut at the stop: the daemon exits within about
    /// `Connection.streamStopGrace`, not after the send timeout (30 s), with every save it
    /// acknowledged in the store.
    @Test func aSubscriberThatDoesNotReadDoesNotHoldUpTheStop() throws {
        let path = try directory.counterStore(records: 1)
        let daemon = try DaemonProcess(store: path, log: directory.path("serve.log"))
        let stuck = try HTTPTestClient(unix: daemon.socket)
        stuck.send(Array("GET /v1/subscribe?q=Counter HTTP/1.1\r\nHost: rill\r\n\r\n".utf8))
        // 2 MiB of changes: far more than a Unix socket's buffer (some 200 KiB) holds.
        let payload = String(repeating: "p", count: 32 << 10)
        let ids = 100..<164
        var acknowledged: [Int] = []
        for id in ids {
            let body = #"[{"op":"insert","entity":"Counter","record":{"id":\#(id),"value":1,"payload":"\#(payload)"}}]"#
            if try HTTPTestClient(unix: daemon.socket).request("POST", "/v1/save", body: body)?.status == 200 {
                acknowledged.append(id)
            }
        }
        #expect(acknowledged == Array(ids))
        // Until the daemon has filled the buffer and its write waits: the queue stops growing.
        var queued = Self.pending(stuck.fd)
        var deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            usleep(300_000)
            let now = Self.pending(stuck.fd)
            if now == queued, now > 64 << 10 { break }
            queued = now
        }
        #expect(queued > 64 << 10, "the subscriber's socket holds \(queued) bytes")

        let signalled = Date()
        kill(daemon.process.processIdentifier, SIGTERM)
        deadline = signalled.addingTimeInterval(25)
        while daemon.process.isRunning, Date() < deadline { usleep(1_000) }
        let took = Date().timeIntervalSince(signalled)
        #expect(took < 10, "the stop took \(took) s")
        #expect(daemon.stop() == 0)
        #expect(daemon.logText.contains("ended"), "\(daemon.logText)")

        let stored = try runBuilt("rill", ["query", path, "Counter where id >= 100", "--json"])
        #expect(stored.status == 0, "\(stored.error)")
        #expect(stored.output.split(separator: "\n").count == acknowledged.count)
    }
}
