import Foundation
import RillTestSupport
import Testing

@testable import Rill

#if canImport(Glibc)
    import Glibc
#endif

/// `rill serve` logs to standard error, and nothing that becomes of standard error stops it
/// serving: a reader that goes away (`rill serve S 2>&1 | head -2`), or one that never reads.
@Suite struct ServeLoggingTests {
    let directory = TemporaryDirectory()

    func makeStore() throws -> String { try directory.counterStore() }

    /// A client whose reads give up after 20 s, so that a daemon stuck in its logging fails the
    /// test instead of hanging it.
    static func client(_ socket: String) throws -> HTTPTestClient {
        let client = try HTTPTestClient(unix: socket)
        var time = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(client.fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        return client
    }

    @Test func aDaemonWhoseStandardErrorReaderLeftServesOn() throws {
        let path = try makeStore()
        let pipe = Pipe()
        let daemon = try DaemonProcess(store: path, log: directory.path("unused.log"), standardError: pipe)
        // Like `| head -1`: the first line is read, then the reader goes away.
        var first: [UInt8] = []
        while !first.contains(10) {
            let data = pipe.fileHandleForReading.availableData
            guard !data.isEmpty else { break }
            first += data
        }
        #expect(String(decoding: first, as: UTF8.self).contains("serving"))
        try pipe.fileHandleForReading.close()

        // Each of these logs a line: a 404 is a warning, a subscription starting and ending info.
        for round in 0..<20 {
            let response = try Self.client(daemon.socket).request("GET", "/v1/nowhere")
            #expect(response?.status == 404, "request \(round) after standard error's reader left")
        }
        let stream = EventStreamReader(try Self.client(daemon.socket), query: "Counter")
        #expect(stream.wait { !$0.isEmpty })
        shutdown(stream.client.fd, Int32(SHUT_RDWR))
        #expect(try Self.client(daemon.socket).request("GET", "/v1/health")?.status == 200)
        #expect(daemon.stop() == 0, "SIGTERM ends the daemon with status 0")
        #expect(!FileManager.default.fileExists(atPath: daemon.socket), "the socket file is removed on exit")
    }

    @Test func aDaemonStartedWithStandardErrorClosedLogsIntoNoFileOfTheStore() throws {
        let path = try makeStore()
        let socket = path + "/rill.sock"
        // `2>&-`: descriptor 2 is closed, and the next file opened would get it.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c", #"exec "$0" serve "$1" 2>&-"#, buildProductsDirectory.appendingPathComponent("rill").path, path,
        ]
        try process.run()
        defer {
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: socket), process.isRunning, Date() < deadline { usleep(10_000) }
        usleep(50_000)
        for round in 0..<20 {
            let response = try Self.client(socket).request("GET", "/v1/nowhere-\(round)")
            #expect(response?.status == 404, "request \(round) with standard error closed")
        }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(!FileManager.default.fileExists(atPath: socket), "the socket file is removed on exit")
        for file in try FileManager.default.contentsOfDirectory(atPath: path) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path + "/" + file))
            #expect(bytes.range(of: Data("nowhere".utf8)) == nil, "a log line was written into \(file)")
        }
    }

    @Test func aDaemonWhoseStandardErrorIsNeverReadServesOn() throws {
        let path = try makeStore()
        let pipe = Pipe()
        let daemon = try DaemonProcess(store: path, log: directory.path("unused.log"), standardError: pipe)
        // Each 404 logs a warning of some 16 KB: the pipe (64 KiB) fills after a few, and the
        // daemon's queue of lines (256 KiB) a little later.
        let long = "/v1/" + String(repeating: "x", count: 8000)
        for round in 0..<100 {
            let response = try Self.client(daemon.socket).request("GET", long)
            #expect(response?.status == 404, "request \(round) with standard error full")
            if response == nil { break }
        }
        #expect(try Self.client(daemon.socket).request("GET", "/v1/health")?.status == 200)
        // Now it is read: what was dropped is counted, and the last lines come after.
        kill(daemon.process.processIdentifier, SIGTERM)
        var log = ""
        let fd = pipe.fileHandleForReading.fileDescriptor
        let deadline = Date().addingTimeInterval(20)
        var chunk = [UInt8](repeating: 0, count: 65536)
        while !log.contains(" stopped"), Date() < deadline {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 100) > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            log += String(decoding: chunk[0..<count], as: UTF8.self)
        }
        #expect(daemon.stop() == 0, "SIGTERM ends the daemon with status 0")
        #expect(!FileManager.default.fileExists(atPath: daemon.socket), "the socket file is removed on exit")
        #expect(log.contains("log line(s) dropped: standard error was not read in time"))
        #expect(log.contains(" stopped"))
    }
}
