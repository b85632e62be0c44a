import Dispatch
import Foundation
import Rill
import RillHTTP
import RillLocks
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `rill serve`: HTTP/1.1 on a Unix socket (and optionally TCP) in front of one store.
///
/// Each listener has an accepting thread and each connection a thread of its own: a save blocks
/// only its own connection, and a subscriber that reads slowly only itself (its events queue up
/// to a bound, past which it is reset to a fresh snapshot). Live subscriptions are live queries
/// on the store's follower, whose handler only queues.
package final class Server: @unchecked Sendable {
    // Sendable: `state` is behind its lock; the rest is immutable after init.
    /// The store served.
    package let store: Store
    /// How it serves: sockets, token, limits, deadlines.
    package let options: ServerOptions
    /// What `GET /metrics` exposes.
    package let metrics = ServerMetrics()
    /// Tells systemd when the daemon is ready and when it stops (`NOTIFY_SOCKET`).
    private let notifier = SystemdNotifier()
    private let listeners: [(fd: Int32, address: SocketAddress, needsToken: Bool)]
    private let state = Lock(State())
    private let finished = DispatchSemaphore(value: 0)

    /// The connections a connection counts against, each with its own limit.
    enum Budget: CaseIterable {
        /// Unix-socket clients.
        case local
        /// TCP clients that have shown the token (or any, when none is asked).
        case remote
        /// TCP clients that have not yet shown the token.
        case unauthenticated
    }

    private struct State {
        var stopping = false
        /// Whether systemd was told the daemon is ready (by ``run(stoppingOn:)``, never by a
        /// server a test started): only then is it told of the stop.
        var notified = false
        var connections: [Int32: Entry] = [:]
        var open: [Budget: Int] = [:]
    }

    private struct Entry {
        let connection: Connection
        /// Nil once it was closed to make room: it counts against no budget while it ends.
        var budget: Budget?
        /// When it was accepted (`DispatchTime.uptimeNanoseconds`).
        let accepted: UInt64
    }

    /// How long an unauthenticated connection is left to show the token before it may be closed
    /// to make room for a new one. A client with the token shows it in its first request, within
    /// milliseconds; until then a burst of such clients waits its turn in the listen backlog.
    static let unauthenticatedGrace = 1.0

    /// A server of `store`, listening already (the Unix socket, and TCP when asked) but not yet accepting.
    ///
    /// - Throws: ``SocketError`` when a listener cannot be made.
    package init(store: Store, options: ServerOptions) throws {
        self.store = store
        self.options = options
        var listeners: [(Int32, SocketAddress, Bool)] = []
        let unix = SocketAddress.unix(options.socketPath)
        listeners.append((try Socket.listen(unix), unix, false))
        if let tcp = options.tcp {
            do {
                listeners.append((try Socket.listen(tcp), tcp, true))
            } catch {
                close(listeners[0].0)
                unlink(options.socketPath)
                throw error
            }
        }
        self.listeners = listeners
    }

    /// Serves until `signals` report SIGTERM or SIGINT, then stops accepting, lets in-flight
    /// requests finish, ends the event streams, and returns. A signal that came before is obeyed
    /// at once.
    package func run(stoppingOn signals: ShutdownSignals) {
        // Reader slots of crashed processes pin old pages: free them now and then.
        let readerCheck = DispatchSource.makeTimerSource(queue: .global())
        readerCheck.schedule(deadline: .now() + 60, repeating: 60)
        readerCheck.setEventHandler { [store] in
            do {
                let freed = try store.clearStaleReaders()
                if freed > 0 { Log.info("freed \(freed) reader slot(s) of dead processes") }
            } catch {
                Log.warning("reader check failed: \(error)")
            }
        }
        readerCheck.resume()
        start()
        state.withLock { $0.notified = true }
        notifier.ready(status: "serving \(store.directory)")
        let watchdog = notifier.watchdogInterval.map(startWatchdog)
        signals.stopping(self)
        waitUntilStopped()
        watchdog?.cancel()
        readerCheck.cancel()
        // The last lines ("stopped") get out, unless standard error is not being read.
        Log.flush()
    }

    /// Sends systemd's watchdog `WATCHDOG=1` at half of `interval`, each time after the store has
    /// answered a read: a daemon whose store no longer answers, or that is stopping, stops
    /// sending, and systemd restarts it (`Restart=`) once `interval` has passed.
    private func startWatchdog(_ interval: Double) -> any DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "rill.watchdog"))
        timer.schedule(deadline: .now(), repeating: interval / 2)
        timer.setEventHandler { [self] in
            guard !state.withLock({ $0.stopping }) else { return }
            do {
                _ = try store.head()
                notifier.alive()
            } catch {
                Log.warning("the store does not answer (\(error)): the watchdog is not told")
            }
        }
        timer.resume()
        return timer
    }

    /// Starts accepting connections, a thread for each listener, and returns. ``run()`` does it
    /// for the daemon; a test starts a server in its own process without taking over its signals.
    package func start() {
        for listener in listeners {
            Log.info("listening on \(listener.address)\(listener.needsToken ? " (bearer token required)" : "")")
            if case .tcp(let host, _) = listener.address, !Self.isLoopback(host) {
                Log.warning(
                    "listening on \(listener.address) beyond loopback without TLS: the token and the data cross "
                        + "the network in clear text; listen on 127.0.0.1 behind a TLS reverse proxy instead "
                        + "(Documentation/Protocol.md, \"TLS through a reverse proxy\")")
            }
            let thread = Thread { [self] in accept(on: listener.fd, needsToken: listener.needsToken) }
            thread.name = "rill.accept"
            thread.start()
        }
    }

    /// Whether `host`, a numeric address or a name, is the loopback interface: 127.0.0.0/8, ::1,
    /// or a name that resolves only to those.
    static func isLoopback(_ host: String) -> Bool {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &result) == 0, let first = result else { return false }
        defer { freeaddrinfo(result) }
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry?.pointee {
            switch address.ai_family {
            case AF_INET:
                let ipv4 = address.ai_addr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
                guard UInt32(bigEndian: ipv4.sin_addr.s_addr) >> 24 == 127 else { return false }
            case AF_INET6:
                let ipv6 = address.ai_addr.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee }
                let bytes = withUnsafeBytes(of: ipv6.sin6_addr) { Array($0) }
                guard bytes == withUnsafeBytes(of: in6addr_loopback, { Array($0) }) else { return false }
            default:
                return false
            }
            entry = address.ai_next
        }
        return true
    }

    /// Waits until the server has stopped (``stop()``) and every connection has ended.
    package func waitUntilStopped() { finished.wait() }

    /// Stops: no new connections; idle ones close, busy ones after their request, streams end.
    package func stop() {
        let (connections, notified) = state.withLock { state -> ([Connection]?, Bool) in
            guard !state.stopping else { return (nil, false) }
            state.stopping = true
            return (state.connections.values.map(\.connection), state.notified)
        }
        guard let connections else { return }
        if notified { notifier.stopping() }
        for listener in listeners { shutdown(listener.fd, Int32(SHUT_RDWR)) }
        for connection in connections { connection.stop() }
        checkFinished()
    }

    private func checkFinished() {
        let done = state.withLock { $0.stopping && $0.connections.isEmpty }
        guard done else { return }
        for listener in listeners { close(listener.fd) }
        unlink(options.socketPath)
        Log.info("stopped")
        finished.signal()
    }

    /// Whether ``stop()`` was called.
    package var isStopping: Bool { state.withLock { $0.stopping } }

    func limit(of budget: Budget) -> Int {
        switch budget {
        case .local, .remote: options.maxConnections
        case .unauthenticated: options.maxUnauthenticated
        }
    }

    /// Moves `connection`, which has just shown the token, from the unauthenticated budget to
    /// the remote one; false when that one is full (the request is then refused).
    func authenticated(_ connection: Connection) -> Bool {
        state.withLock { state in
            guard state.connections[connection.fd]?.connection === connection,
                state.connections[connection.fd]?.budget == .unauthenticated
            else { return true }
            guard state.open[.remote, default: 0] < limit(of: .remote) else { return false }
            state.open[.unauthenticated, default: 0] -= 1
            state.open[.remote, default: 0] += 1
            state.connections[connection.fd]?.budget = .remote
            return true
        }
    }

    /// Waits until the unauthenticated budget has room, making it by closing the connection that
    /// has waited longest once it has had `unauthenticatedGrace` to authenticate. Meanwhile new
    /// connections wait in the kernel's listen backlog, in the order they came.
    private func makeRoomForUnauthenticated() {
        while true {
            let wait = state.withLock { state -> Double? in
                guard !state.stopping, state.open[.unauthenticated, default: 0] >= limit(of: .unauthenticated) else {
                    return nil
                }
                guard
                    let oldest = state.connections.values.filter({ $0.budget == .unauthenticated })
                        .min(by: { $0.accepted < $1.accepted })
                else { return nil }
                let age = Double(DispatchTime.now().uptimeNanoseconds - oldest.accepted) / 1e9
                guard age >= Self.unauthenticatedGrace else { return Self.unauthenticatedGrace - age }
                state.connections[oldest.connection.fd]?.budget = nil
                state.open[.unauthenticated, default: 0] -= 1
                // Its thread removes it, and closes the descriptor, under this lock: it is still open.
                shutdown(oldest.connection.fd, Int32(SHUT_RDWR))
                return 0
            }
            guard let wait else { return }
            if wait == 0 {
                Log.warning(
                    "closed the unauthenticated TCP connection that waited longest: \(options.maxUnauthenticated) "
                        + "were open (--max-unauthenticated)")
                return
            }
            // Connections that authenticate or end make room too: look again soon.
            usleep(UInt32(min(wait, 0.01) * 1e6))
        }
    }

    /// Whether the peer of `client`, a Unix-socket connection, is the daemon's own user or root;
    /// when not, it is answered 403 and closed. The socket's mode (0600) keeps other users out
    /// already: this holds when it was made reachable all the same.
    private func admitsPeer(of client: Int32) -> Bool {
        let peer = PeerCredentials(of: client)
        if let peer, peer.isTrusted { return true }
        Log.warning(
            "refused a local connection of "
                + (peer.map { "uid \($0.uid) (pid \($0.pid))" } ?? "a peer whose credentials are unknown")
                + ": only uid \(geteuid()) and root are served on the Unix socket")
        Socket.setTimeouts(client, receive: 1, send: 1)
        metrics.countRejection(status: 403, reason: "forbidden")
        let forbidden = HTTPError(
            status: 403, code: "forbidden", message: "only the daemon's user and root are served on its Unix socket")
        _ = Socket.write(client, HTTPResponse.error(forbidden).serialized(keepAlive: false))
        close(client)
        return false
    }

    private func accept(on fd: Int32, needsToken: Bool) {
        let budget: Budget = !needsToken ? .local : options.token == nil ? .remote : .unauthenticated
        while true {
            if budget == .unauthenticated { makeRoomForUnauthenticated() }
            let client = Socket.accept(fd, tcp: needsToken)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if isStopping { return }
                // Out of descriptors, for example: wait a little rather than spin.
                Log.warning("accept failed: \(String(cString: strerror(errno)))")
                usleep(100_000)
                continue
            }
            if !needsToken, !admitsPeer(of: client) { continue }
            let connection = Connection(fd: client, server: self, needsToken: needsToken)
            enum Admission { case accepted, full, stopping }
            let admission = state.withLock { state -> Admission in
                guard !state.stopping else { return .stopping }
                // The unauthenticated budget was made room in above, and only this thread fills it.
                guard budget == .unauthenticated || state.open[budget, default: 0] < limit(of: budget) else {
                    return .full
                }
                state.connections[client] = Entry(
                    connection: connection, budget: budget, accepted: DispatchTime.now().uptimeNanoseconds)
                state.open[budget, default: 0] += 1
                return .accepted
            }
            switch admission {
            case .accepted:
                if needsToken {
                    metrics.acceptedTCP.wrappingAdd(1, ordering: .relaxed)
                } else {
                    metrics.acceptedLocal.wrappingAdd(1, ordering: .relaxed)
                }
                metrics.openConnections.wrappingAdd(1, ordering: .relaxed)
            case .full:
                Log.warning(
                    "refused a \(budget == .local ? "local" : "TCP") connection: \(options.maxConnections) are open "
                        + "(--max-connections)")
                Socket.setTimeouts(client, receive: 1, send: 1)
                metrics.countRejection(status: 503, reason: "tooManyConnections")
                let busy = HTTPError(
                    status: 503, code: "tooManyConnections",
                    message: "the daemon serves \(options.maxConnections) connections at most; try again later")
                _ = Socket.write(client, HTTPResponse.error(busy).serialized(keepAlive: false))
                close(client)
                continue
            case .stopping:
                close(client)
                return
            }
            let thread = Thread { [self] in
                connection.serve()
                state.withLock { state in
                    if let entry = state.connections.removeValue(forKey: client), let budget = entry.budget {
                        state.open[budget, default: 0] -= 1
                    }
                }
                close(client)
                metrics.openConnections.wrappingSubtract(1, ordering: .relaxed)
                checkFinished()
            }
            thread.name = "rill.connection"
            thread.stackSize = 1 << 20
            thread.start()
        }
    }
}
