import Foundation
import RillHTTP
import RillTestSupport
import RillWorkloads
import Testing

@testable import RillServer

#if canImport(Glibc)
    import Glibc
#endif

/// What the `hostile` suite found in `rill serve`, each kept fixed: a client must not be able to
/// grow the daemon's log or memory by much more than what it sends, nor keep a connection
/// without the token.
@Suite struct ServeHostileRequestTests {
    let directory = TemporaryDirectory()

    @Test func aHugeBadQueryAddsALineOfBoundedLengthToTheLog() throws {
        let path = try directory.counterStore(records: 3)
        let daemon = try DaemonProcess(store: path, log: directory.path("serve.log"))
        let client = try HTTPTestClient(unix: daemon.socket)
        // The error quotes the query, with a caret line under it: twice its size in the answer.
        let query = "Counter where " + String(repeating: "(", count: 1 << 20)
        let response = try #require(client.request("POST", "/v1/query", body: #"{"query":"\#(query)"}"#))
        #expect(response.status == 400)
        #expect(client.request("GET", "/v1/health")?.status == 200)
        #expect(daemon.stop() == 0)
        let line = try #require(daemon.logText.split(separator: "\n").first { $0.contains("POST /v1/query 400") })
        #expect(line.utf8.count < Connection.loggedBodyBytes + 200, "a log line of \(line.utf8.count) bytes")
        #expect(line.hasSuffix(" bytes)"), "the line says how long the body was")
    }

    @Test func anExcerptKeepsShortBodiesWholeAndCutsLongOnes() {
        #expect(Connection.excerpt(Array("short".utf8)) == "short")
        let long = [UInt8](repeating: UInt8(ascii: "a"), count: 5000)
        #expect(
            Connection.excerpt(long) == String(repeating: "a", count: Connection.loggedBodyBytes) + "… (5000 bytes)")
        // A cut in the middle of a character gives a replacement character, not a crash.
        let accents = Array(String(repeating: "é", count: 2000).utf8)
        #expect(Connection.excerpt(accents).hasSuffix("… (4000 bytes)"))
    }

    @Test func aReaderLetsGoOfALargeBodysBuffer() throws {
        var reader = HTTPRequestReader(limits: HTTPLimits())
        let body = [UInt8](repeating: UInt8(ascii: " "), count: 4 << 20)
        let head = Array("POST /v1/save HTTP/1.1\r\nContent-Length: \(body.count)\r\n\r\n".utf8)
        let next = Array("GET /v1/health HTTP/1.1\r\n\r\n".utf8)
        for chunk in [head, body, next] { chunk.withUnsafeBytes { reader.append($0) } }
        let request = try #require(try reader.next())
        #expect(request.body.count == body.count)
        // What follows the body is kept; the megabytes the body took are not.
        #expect(reader.buffer == next)
        #expect(reader.buffer.capacity < 1 << 20, "capacity \(reader.buffer.capacity)")
        #expect(try reader.next()?.path == "/v1/health")
    }

    /// The daemon's resident memory, from `/proc`.
    static func residentBytes(of process: Process) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (line.split(separator: " ").compactMap { Int($0) }.first ?? 0) << 10
    }

    @Test func largeBodiesGiveTheirMemoryBackOnceAnswered() throws {
        let path = try directory.counterStore(records: 3)
        let daemon = try DaemonProcess(store: path, log: directory.path("serve.log"))
        // Idle connections, each a thread: the large requests that follow come from threads
        // that glibc spreads over its arenas.
        let idle = try (0..<40).map { _ in try HTTPTestClient(unix: daemon.socket) }
        #expect(idle.first?.request("GET", "/v1/health")?.status == 200)
        let before = Self.residentBytes(of: daemon.process)
        let body = "[" + String(repeating: "@", count: 8 << 20)
        for _ in 0..<8 {
            let client = try HTTPTestClient(unix: daemon.socket)
            #expect(client.request("POST", "/v1/save", body: body)?.status == 400)
        }
        let grown = Self.residentBytes(of: daemon.process) - before
        // Each body is held twice while it is read (the connection's buffer, the request): 16
        // MiB at a time, and none of it once answered.
        #expect(grown < 24 << 20, "the daemon grew by \(grown >> 20) MiB over eight 8 MiB bodies")
        #expect(daemon.stop() == 0)
    }

    @Test func a401OverTCPClosesTheConnection() throws {
        let path = try directory.counterStore(records: 3)
        let port = try freeTCPPort()
        let daemon = try DaemonProcess(
            store: path, arguments: ["--listen", ":\(port)"], environment: ["RILL_TOKEN": "right-\(UUID())"],
            log: directory.path("serve.log"))
        for headers in [[], ["Authorization: Bearer wrong"]] {
            let client = try HTTPTestClient(port: port)
            #expect(client.request("GET", "/v1/health", headers: headers)?.status == 401)
            // Nothing more: the daemon closed the connection, it serves no next request on it.
            #expect(client.request("GET", "/v1/health", headers: headers) == nil)
        }
        #expect(daemon.stop() == 0)
    }
}
