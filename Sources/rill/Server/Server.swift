import Dispatch
import Foundation
import Rill
import RillStorage
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
    /// The most connections served at once; past it a new one is answered 503 and closed.
    var maxConnections = 512
    /// How long a connection may sit between requests, and a client may take to read.
    var idleSeconds = 60.0
    var sendSeconds = 30.0
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

    private struct State {
        var stopping = false
        var connections: [Int32: Connection] = [:]
        var nextConnection: Int32 = 0
    }

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
                let freed = try store.environment.checkReaders()
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
            return Array(state.connections.values)
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

    private func accept(on fd: Int32, needsToken: Bool) {
        while true {
            let client = Glibc.accept(fd, nil, nil)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if isStopping { return }
                // Out of descriptors, for example: wait a little rather than spin.
                Log.warning("accept failed: \(String(cString: strerror(errno)))")
                usleep(100_000)
                continue
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            let connection = Connection(fd: client, server: self, needsToken: needsToken)
            enum Admission { case accepted, full, stopping }
            let admission = state.withLock { state -> Admission in
                guard !state.stopping else { return .stopping }
                guard state.connections.count < options.maxConnections else { return .full }
                state.connections[client] = connection
                return .accepted
            }
            switch admission {
            case .accepted:
                break
            case .full:
                Log.warning("refused a connection: \(options.maxConnections) are open (--max-connections)")
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
                state.withLock { _ = $0.connections.removeValue(forKey: client) }
                close(client)
                checkFinished()
            }
            thread.name = "rill.connection"
            thread.stackSize = 1 << 20
            thread.start()
        }
    }
}
