import Foundation
import RillTestSupport
import Testing

@testable import Rill

#if canImport(Glibc)
    import Glibc
#endif

/// A subscriber of `rill serve` that goes away is noticed at once: its connection slot, its live
/// query and their memory are given back without waiting for the next keep-alive write.
@Suite struct ServeSubscriberTests {
    let directory = TemporaryDirectory()

    func makeStore(records: Int, payload: Int) throws -> String {
        try directory.counterStore(records: records, payload: payload)
    }

    /// Subscribes to `query`, reads the results, and goes away.
    static func subscribeAndLeave(_ socket: String, _ query: String) throws {
        let client = try HTTPTestClient(unix: socket)
        var time = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(client.fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? query
        client.send(Array("GET /v1/subscribe?q=\(encoded) HTTP/1.1\r\n\r\n".utf8))
        // The head, then the results event, each written whole and ending in a blank line. Only
        // the start (to see the event's name) and the last two bytes are kept.
        var start = ""
        var last: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            if start.utf8.count < 1024 { start += String(decoding: chunk[0..<min(count, 1024)], as: UTF8.self) }
            last = count >= 2 ? [chunk[count - 2], chunk[count - 1]] : Array((last + [chunk[0]]).suffix(2))
            if last == [10, 10], start.contains("event: results") { break }
        }
        #expect(start.contains("event: results"))
        shutdown(client.fd, Int32(SHUT_RDWR))
    }

    /// Waits (up to 20 s) until the daemon has logged `count` subscribers ending.
    static func waitForEnded(_ daemon: DaemonProcess, _ count: Int) -> Bool {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if daemon.logText.components(separatedBy: " ended").count - 1 >= count { return true }
            usleep(10_000)
        }
        return false
    }

    /// Waits (up to 20 s) until the daemon answers a health request with 200, not 503.
    static func waitForHealth(_ daemon: DaemonProcess) -> Bool {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if (try? HTTPTestClient(unix: daemon.socket).request("GET", "/v1/health"))?.status == 200 { return true }
            usleep(10_000)
        }
        return false
    }

    /// The daemon's resident set, in bytes.
    static func residentBytes(_ daemon: DaemonProcess) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(daemon.process.processIdentifier)/status", encoding: .utf8))
        let line = status?.components(separatedBy: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    @Test func aSubscriberThatLeavesFreesItsSlotAtOnce() throws {
        let path = try makeStore(records: 10, payload: 1)
        // Keep-alive comments every 60 s: a daemon that noticed a closed client only when writing
        // one would hold the slot for a minute.
        let daemon = try DaemonProcess(
            store: path, arguments: ["--max-connections", "2", "--keep-alive", "60"], log: directory.path("serve.log"))
        let first = EventStreamReader(try HTTPTestClient(unix: daemon.socket), query: "Counter")
        let second = EventStreamReader(try HTTPTestClient(unix: daemon.socket), query: "Counter limit 1")
        #expect(first.wait { !$0.isEmpty } && second.wait { !$0.isEmpty })
        #expect(try HTTPTestClient(unix: daemon.socket).response()?.status == 503, "both slots are taken")
        for (index, stream) in [first, second].enumerated() {
            shutdown(stream.client.fd, Int32(SHUT_RDWR))
            #expect(Self.waitForEnded(daemon, index + 1), "subscriber \(index) was not noticed leaving")
            // The slot is released just after the line is logged, when the connection's thread ends.
            #expect(Self.waitForHealth(daemon), "its slot is free")
        }
        #expect(daemon.stop() == 0)
    }

    @Test func theDaemonRaisesItsLimitOfOpenDescriptors() throws {
        let path = try makeStore(records: 1, payload: 1)
        // A soft limit of 64 would allow some twenty subscribers (each holds three descriptors).
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c", #"ulimit -Sn 64 && exec "$0" serve "$1" 2>/dev/null"#,
            buildProductsDirectory.appendingPathComponent("rill").path, path,
        ]
        try process.run()
        defer {
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
        let socket = path + "/rill.sock"
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: socket), process.isRunning, Date() < deadline { usleep(10_000) }
        let limits = try String(contentsOfFile: "/proc/\(process.processIdentifier)/limits", encoding: .utf8)
        let line = try #require(limits.components(separatedBy: "\n").first { $0.hasPrefix("Max open files") })
        let numbers = line.split(separator: " ").compactMap { Int($0) }
        #expect(numbers.count == 2 && numbers[0] == numbers[1] && numbers[0] > 64, "\(line)")
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    @Test func subscribingAndLeavingGivesTheMemoryBack() throws {
        // Each subscription holds the whole entity: 5,000 rows of some 300 bytes.
        let path = try makeStore(records: 2_000, payload: 300)
        let daemon = try DaemonProcess(
            store: path, arguments: ["--keep-alive", "60"], log: directory.path("serve.log"))
        for _ in 0..<3 { try Self.subscribeAndLeave(daemon.socket, "Counter") }
        #expect(Self.waitForEnded(daemon, 3))
        // The daemon's footprint with a query loaded and released once, settled.
        var baseline = Self.residentBytes(daemon)
        let settle = Date().addingTimeInterval(2)
        while Date() < settle {
            usleep(100_000)
            baseline = min(baseline, Self.residentBytes(daemon))
        }
        let cycles = 40
        var highest = 0
        for _ in 0..<cycles {
            try Self.subscribeAndLeave(daemon.socket, "Counter")
            highest = max(highest, Self.residentBytes(daemon))
        }
        #expect(Self.waitForEnded(daemon, 3 + cycles), "every subscriber was noticed leaving")
        // Back close to where it started (glibc's malloc is asked to return what was freed).
        let allowance = 16 << 20
        var final = Self.residentBytes(daemon)
        let deadline = Date().addingTimeInterval(10)
        while final > baseline + allowance, Date() < deadline {
            usleep(100_000)
            final = Self.residentBytes(daemon)
        }
        #expect(
            final <= baseline + allowance,
            "resident set: \(baseline >> 20) MiB before \(cycles) cycles, \(highest >> 20) MiB at most, \(final >> 20) MiB after"
        )
        #expect(try HTTPTestClient(unix: daemon.socket).request("GET", "/v1/health")?.status == 200)
        #expect(daemon.stop() == 0)
    }
}
