import Foundation
import RillHTTP
import RillLocks

#if canImport(Glibc)
    import Glibc
#endif

/// The misbehaving clients of the `hostile` suite, and what they found: idle connections and
/// subscribers that never read (held until ``closeAll()``), slowloris clients, malformed
/// requests, and subscribers that come and go.
struct HostileClients {
    let daemon: HostileDaemon
    let plan: HostileClientSuite.Plan
    /// Requests sent that the daemon must refuse or survive.
    private(set) var requests = 0
    var problems: [String] = []
    private var held: [HostileConnection] = []
    private var idle: [HostileConnection] = []

    init(daemon: HostileDaemon, plan: HostileClientSuite.Plan) {
        self.daemon = daemon
        self.plan = plan
    }

    /// The process's soft limit on descriptors raised to its hard one: the suite holds a
    /// connection's descriptor for every idle client.
    static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    private var unix: SocketAddress { .unix(daemon.socket) }
    private var tcp: SocketAddress { .tcp(host: "127.0.0.1", port: daemon.port) }

    /// Opens `plan.idle` connections on the Unix socket and leaves them silent; every tenth has
    /// sent one request first (a keep-alive connection between requests).
    mutating func openIdle() {
        for index in 0..<plan.idle {
            guard let connection = try? HostileConnection(unix) else {
                problems.append("idle connection \(index) could not connect: \(String(cString: strerror(errno)))")
                return
            }
            if index % 10 == 0, connection.request("GET", "/v1/health")?.status != 200 {
                problems.append("idle connection \(index) was not served")
            }
            idle.append(connection)
            if index % 50 == 49 { usleep(10_000) }
        }
    }

    /// Opens `plan.neverReading` subscribers of every item, which never read a byte.
    mutating func openNeverReading() {
        for index in 0..<plan.neverReading {
            guard let connection = try? HostileConnection(unix) else {
                problems.append("subscriber \(index) could not connect")
                return
            }
            connection.send("GET /v1/subscribe?q=TortureItem HTTP/1.1\r\nHost: rill\r\n\r\n")
            held.append(connection)
            requests += 1
        }
    }

    /// Sends `request` on a connection of its own and checks the answer: its status, and that
    /// the daemon closes the connection when it must, or serves a next request when it need not.
    mutating func send(_ request: HostileRequest, round: Int) {
        requests += 1
        guard let connection = try? HostileConnection(request.overTCP ? tcp : unix) else {
            problems.append("\(request.name): could not connect")
            return
        }
        connection.send(request.bytes)
        guard let response = connection.response(within: 30) else {
            problems.append("\(request.name) (round \(round)): no answer")
            return
        }
        if response.status != request.status {
            problems.append(
                "\(request.name): answered \(response.status), not \(request.status): \(response.body.prefix(300))")
        }
        if request.overTCP,
            response.body.contains("results") || response.body.contains("\"seq\"")
                || response.body.contains("w0-")
        {
            problems.append("\(request.name): the answer without the token holds data: \(response.body.prefix(300))")
        }
        if request.closes {
            if !connection.closedByPeer(within: 5) { problems.append("\(request.name): the connection stayed open") }
        } else if !request.overTCP, connection.request("GET", "/v1/health")?.status != 200 {
            problems.append("\(request.name): the connection was not served after it")
        }
    }

    /// Starts `plan.slowloris` clients, each on a thread, sending a byte every
    /// `plan.slowlorisPause`: heads and bodies, on the Unix socket and over TCP. Each must be
    /// ended by the daemon (408, or closed) within its deadline.
    func startSlowloris() -> Slowloris {
        Slowloris(plan: plan, unix: daemon.socket, port: daemon.port)
    }

    /// Subscribes and closes `count` times: half close once the first event came, half at once.
    mutating func churnSubscribers(_ count: Int) {
        for index in 0..<count {
            requests += 1
            guard let connection = try? HostileConnection(unix) else {
                problems.append("churned subscriber \(index) could not connect")
                return
            }
            connection.send("GET /v1/subscribe?q=TortureItem%20where%20number%20%3C%205 HTTP/1.1\r\nHost: rill\r\n\r\n")
            if index % 2 == 0 {
                let deadline = Date().addingTimeInterval(20)
                while !connection.pending.contains("event: results"), Date() < deadline {
                    guard connection.receive(within: deadline.timeIntervalSinceNow) else { break }
                }
                if !connection.pending.contains("event: results") {
                    problems.append("churned subscriber \(index) got no results: \(connection.pending.prefix(200))")
                }
            }
            usleep(2_000)
        }
    }

    /// Every idle connection is still there and served: a request on a sample of them.
    mutating func checkIdleAreServed() {
        for index in stride(from: 0, to: idle.count, by: max(1, idle.count / 20))
        where idle[index].request("GET", "/v1/health")?.status != 200 {
            problems.append("idle connection \(index) was not served after the abuse")
        }
    }

    /// Closes every held connection.
    mutating func closeAll() {
        idle.removeAll()
        held.removeAll()
    }

    /// The slowloris clients, on threads of their own.
    final class Slowloris: @unchecked Sendable {
        // Sendable: `found` is behind its lock; the rest is immutable.
        private let found = Lock<[String]>([])
        private let group = DispatchGroup()

        init(plan: HostileClientSuite.Plan, unix: String, port: UInt16) {
            for index in 0..<plan.slowloris {
                let overTCP = index % 3 == 2
                let body = index % 3 == 1
                group.enter()
                Thread { [self] in
                    defer { group.leave() }
                    let address: SocketAddress = overTCP ? .tcp(host: "127.0.0.1", port: port) : .unix(unix)
                    guard let connection = try? HostileConnection(address) else {
                        found.withLock { $0.append("slowloris \(index) could not connect") }
                        return
                    }
                    connection.send(
                        body
                            ? "POST /v1/save HTTP/1.1\r\nContent-Length: 100000\r\n\r\n["
                            : "GET /v1/health HTTP/1.1\r\n")
                    // The head within the request timeout, the body within as long again; over
                    // TCP, without the token, the connection goes within the request timeout too.
                    let allowed = plan.requestTimeout * (body ? 2 : 1) + plan.slowlorisPause + 2
                    let started = Date()
                    var sent = 0
                    while Date().timeIntervalSince(started) < allowed + 5 {
                        if connection.closedByPeer(within: plan.slowlorisPause) || !connection.pending.isEmpty {
                            break
                        }
                        guard connection.send(body ? " " : "X-\(sent): v\r\n") else { break }
                        sent += 1
                    }
                    let took = Date().timeIntervalSince(started)
                    let answer = connection.pending
                    if took > allowed {
                        found.withLock {
                            $0.append(
                                String(
                                    format: "slowloris %d was let go on for %.1f s (allowed %.1f s)", index, took,
                                    allowed))
                        }
                    }
                    if !answer.isEmpty, !answer.hasPrefix("HTTP/1.1 408 "),
                        !(overTCP && answer.hasPrefix("HTTP/1.1 401 "))
                    {
                        found.withLock { $0.append("slowloris \(index) was answered \(answer.prefix(80))") }
                    }
                }.start()
            }
        }

        /// Waits for every slowloris client to be ended, and returns what went wrong.
        func finish() -> [String] {
            group.wait()
            return found.withLock { $0 }
        }
    }
}
