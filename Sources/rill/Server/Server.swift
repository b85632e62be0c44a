import Dispatch
import Foundation
import Rill
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How `rill serve` is set up.
struct ServerOptions: Sendable {
    var socketPath: String
    var tcp: SocketAddress?
    /// Required of every request over TCP (`Authorization: Bearer …`).
    var token: String?
    /// Origins a browser may call from over TCP (CORS); none by default.
    var allowedOrigins: Set<String> = []
    var limits = HTTPLimits()
    /// Events a subscriber may fall behind by before it is reset.
    var subscriberQueue = 1024
    /// The most commits a subscription resumes across (`Last-Event-ID`); further behind, it is
    /// reset to the current results instead.
    var resumeLimit: UInt64 = 100_000
    /// The most connections served at once on the Unix socket, and as many again over TCP once
    /// they have authenticated; past it a new one is answered 503 and closed.
    var maxConnections = 512
    /// The most TCP connections not yet authenticated (no request with the token yet): their
    /// own budget, so that they cannot use up the connections of local and authenticated
    /// clients. Past it, new TCP connections wait in the listen backlog, and the one that has
    /// waited longest is closed to make room once it has had a second to authenticate.
    var maxUnauthenticated = 16
    /// How long a connection may sit between requests (an unauthenticated one: `requestSeconds`).
    var idleSeconds = 60.0
    /// How long a request's head may take from its first byte; its body has as long again, or
    /// the time to send it at `bodyBytesPerSecond`, whichever is longer.
    var requestSeconds = 10.0
    /// How long a client may take to read what it is sent.
    var sendSeconds = 30.0
    /// An event stream sends a comment after this long without events.
    var keepAliveSeconds = 15.0

    /// The slowest body upload a request's deadline allows for.
    static let bodyBytesPerSecond = 256 << 10

    /// How long the body of a request of `length` bytes may take to arrive.
    func bodySeconds(_ length: Int) -> Double {
        max(requestSeconds, Double(length) / Double(Self.bodyBytesPerSecond))
    }
}

/// `rill serve`: HTTP/1.1 on a Unix socket (and optionally TCP) in front of one store.
///
/// Each listener has an accepting thread and each connection a thread of its own: a save blocks
/// only its own connection, and a subscriber that reads slowly only itself (its events queue up
/// to a bound, past which it is reset to a fresh snapshot). Live subscriptions are live queries
/// on the store's follower, whose handler only queues.
final class Server: @unchecked Sendable {
    // Sendable: `state` is behind its lock; the rest is immutable after init.
    let store: Store
    let options: ServerOptions
    private let listeners: [(fd: Int32, address: SocketAddress, needsToken: Bool)]
    private let state = Mutex(State())
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

    init(store: Store, options: ServerOptions) throws {
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

    /// Serves until SIGTERM or SIGINT, then stops accepting, lets in-flight requests finish,
    /// ends the event streams, and returns.
    func run() {
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let signals = [SIGTERM, SIGINT].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in
                Log.info("received \(number == SIGTERM ? "SIGTERM" : "SIGINT"): shutting down")
                stop()
            }
            source.resume()
            return source
        }
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
        for listener in listeners {
            Log.info("listening on \(listener.address)\(listener.needsToken ? " (bearer token required)" : "")")
            let thread = Thread { [self] in accept(on: listener.fd, needsToken: listener.needsToken) }
            thread.name = "rill.accept"
            thread.start()
        }
        finished.wait()
        readerCheck.cancel()
        withExtendedLifetime(signals) {}
        // The last lines ("stopped") get out, unless standard error is not being read.
        Log.flush()
    }

    /// Stops: no new connections; idle ones close, busy ones after their request, streams end.
    func stop() {
        let connections = state.withLock { state -> [Connection]? in
            guard !state.stopping else { return nil }
            state.stopping = true
            return state.connections.values.map(\.connection)
        }
        guard let connections else { return }
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

    var isStopping: Bool { state.withLock { $0.stopping } }

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
                break
            case .full:
                Log.warning(
                    "refused a \(budget == .local ? "local" : "TCP") connection: \(options.maxConnections) are open "
                        + "(--max-connections)")
                Socket.setTimeouts(client, receive: 1, send: 1)
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
                checkFinished()
            }
            thread.name = "rill.connection"
            thread.stackSize = 1 << 20
            thread.start()
        }
    }
}
