import Foundation
import RillLocks
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

#if canImport(Glibc)
    import Glibc
#endif

/// `rill serve`'s connections: every request has a deadline, and clients that have not shown the
/// token cannot use up the connections of local and authenticated ones.
@Suite struct ServeConnectionBudgetTests {
    let directory = TemporaryDirectory()
    let token = "t0ken-\(UUID())"

    func makeStore() throws -> String { try directory.counterStore() }

    /// Gives `client`'s reads a bound, so that a daemon that never answers fails the test.
    static func bounded(_ client: HTTPTestClient, seconds: Int = 20) -> HTTPTestClient {
        var time = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(client.fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        return client
    }

    /// A client that sends `first`, then `next(n)` every 100 ms, until the daemon answers or
    /// closes the connection (what it answered), or 30 s pass (nil).
    final class Dribbler: @unchecked Sendable {
        let client: HTTPTestClient
        private let outcome = Lock<String?>(nil)
        private let done = DispatchSemaphore(value: 0)

        init(_ client: HTTPTestClient, first: String, next: @escaping @Sendable (Int) -> String) {
            self.client = client
            client.send(Array(first.utf8))
            Thread { [self] in
                let client = self.client
                defer { done.signal() }
                let deadline = Date().addingTimeInterval(30)
                var round = 0
                while Date() < deadline {
                    var entry = pollfd(fd: client.fd, events: Int16(POLLIN), revents: 0)
                    if poll(&entry, 1, 100) > 0 {
                        var chunk = [UInt8](repeating: 0, count: 4096)
                        let count = chunk.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
                        let text = count > 0 ? String(decoding: chunk[0..<count], as: UTF8.self) : "closed"
                        outcome.withLock { $0 = text }
                        return
                    }
                    round += 1
                    client.send(Array(next(round).utf8))
                }
            }.start()
        }

        /// What the daemon did: its response's first line, "closed", or nil when it let the
        /// client dribble on.
        func result() -> String? {
            _ = done.wait(timeout: .now() + 40)
            return outcome.withLock { $0 }.map { $0.components(separatedBy: "\r\n")[0] }
        }
    }

    @Test func dribblingTCPClientsCannotLockOutLocalOrAuthenticatedOnes() throws {
        let path = try makeStore()
        let port = try freeTCPPort()
        let daemon = try DaemonProcess(
            store: path,
            arguments: [
                "--listen", ":\(port)", "--max-connections", "3", "--max-unauthenticated", "2",
                "--request-timeout", "1",
            ],
            environment: ["RILL_TOKEN": token], log: directory.path("serve.log"))
        // Six TCP clients send a request a header line at a time, without the token.
        let dribblers = try (0..<6).map { _ in
            Dribbler(
                try HTTPTestClient(port: port), first: "GET /v1/health HTTP/1.1\r\n",
                next: { "X-Line-\($0): dribble\r\n" })
        }
        // Local clients have a budget of their own: all three are served at once.
        let local = try (0..<3).map { _ in Self.bounded(try HTTPTestClient(unix: daemon.socket)) }
        for (index, client) in local.enumerated() {
            #expect(client.request("GET", "/v1/health")?.status == 200, "local client \(index)")
        }
        // A TCP client with the token gets in: the unauthenticated client that waited longest
        // makes room, and showing the token moves it to the authenticated budget.
        let authenticated = Self.bounded(try HTTPTestClient(port: port))
        #expect(authenticated.request("GET", "/v1/health", headers: ["Authorization: Bearer \(token)"])?.status == 200)
        // Every dribbler is ended: refused, closed to make room, or out of time for its head.
        for (index, dribbler) in dribblers.enumerated() {
            let result = dribbler.result()
            #expect(result != nil, "dribbler \(index) was let dribble on")
            #expect(
                result == "closed" || result?.contains(" 408 ") == true || result?.contains(" 503 ") == true,
                "dribbler \(index): \(result ?? "")")
        }
        // An authenticated connection stays open past the request deadline between requests.
        usleep(1_500_000)
        #expect(
            authenticated.request("GET", "/v1/health", headers: ["Authorization: Bearer \(token)"])?.status == 200,
            "an authenticated connection keeps its idle time")
        #expect(daemon.stop() == 0)
    }

    @Test func aBurstOfClientsWithTheTokenIsQueuedNotClosed() throws {
        let path = try makeStore()
        let port = try freeTCPPort()
        let daemon = try DaemonProcess(
            store: path, arguments: ["--listen", ":\(port)", "--max-unauthenticated", "2"],
            environment: ["RILL_TOKEN": token], log: directory.path("serve.log"))
        // Twenty connections at once, ten times the unauthenticated budget, each showing the token.
        let clients = try (0..<20).map { _ in Self.bounded(try HTTPTestClient(port: port)) }
        for client in clients {
            client.send(Array("GET /v1/health HTTP/1.1\r\nAuthorization: Bearer \(token)\r\n\r\n".utf8))
        }
        for (index, client) in clients.enumerated() {
            #expect(client.response()?.status == 200, "client \(index)")
        }
        #expect(daemon.stop() == 0)
    }

    @Test func everyRequestHasADeadline() throws {
        let path = try makeStore()
        let port = try freeTCPPort()
        let daemon = try DaemonProcess(
            store: path, arguments: ["--listen", ":\(port)", "--request-timeout", "1"],
            environment: ["RILL_TOKEN": token], log: directory.path("serve.log"))
        // A body sent a byte at a time runs out of time (a local client, too).
        let body = Dribbler(
            Self.bounded(try HTTPTestClient(unix: daemon.socket)),
            first: "POST /v1/save HTTP/1.1\r\nContent-Length: 1000\r\n\r\n[", next: { _ in " " })
        #expect(body.result()?.hasPrefix("HTTP/1.1 408 ") == true)
        // A head sent a line at a time, too.
        let head = Dribbler(
            Self.bounded(try HTTPTestClient(unix: daemon.socket)), first: "GET /v1/health HTTP/1.1\r\n",
            next: { "X-Line-\($0): dribble\r\n" })
        #expect(head.result()?.hasPrefix("HTTP/1.1 408 ") == true)
        // Over TCP, a body without the token is refused as soon as its head is in.
        let refused = Self.bounded(try HTTPTestClient(port: port))
        refused.send(Array("POST /v1/save HTTP/1.1\r\nContent-Length: 100000\r\n\r\n".utf8))
        #expect(refused.response()?.status == 401)
        // A TCP connection that never shows the token and sends nothing is closed.
        let silent = Dribbler(Self.bounded(try HTTPTestClient(port: port)), first: "", next: { _ in "" })
        #expect(silent.result() == "closed")
        #expect(try HTTPTestClient(unix: daemon.socket).request("GET", "/v1/health")?.status == 200)
        #expect(daemon.stop() == 0)
    }
}
