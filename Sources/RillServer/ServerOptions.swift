import RillHTTP
import RillService

/// How `rill serve` is set up.
package struct ServerOptions: Sendable {
    /// The Unix socket's path (`<store>/rill.sock` by default).
    package var socketPath: String
    /// A TCP address to listen on too, or nil.
    package var tcp: SocketAddress?
    /// Required of every request over TCP (`Authorization: Bearer …`).
    package var token: String?
    /// Origins a browser may call from over TCP (CORS); none by default.
    package var allowedOrigins: Set<String> = []
    /// What a request may hold.
    package var limits = HTTPLimits()
    /// Events a subscriber may fall behind by before it is reset.
    package var subscriberQueue = 1024
    /// The most commits a subscription resumes across (`Last-Event-ID`); further behind, it is
    /// reset to the current results instead.
    package var resumeLimit: UInt64 = 100_000
    /// The most connections served at once on the Unix socket, and as many again over TCP once
    /// they have authenticated; past it a new one is answered 503 and closed.
    package var maxConnections = 512
    /// The most TCP connections not yet authenticated (no request with the token yet): their
    /// own budget, so that they cannot use up the connections of local and authenticated
    /// clients. Past it, new TCP connections wait in the listen backlog, and the one that has
    /// waited longest is closed to make room once it has had a second to authenticate.
    package var maxUnauthenticated = 16
    /// How long a connection may sit between requests (an unauthenticated one: `requestSeconds`).
    package var idleSeconds = 60.0
    /// How long a request's head may take from its first byte; its body has as long again, or
    /// the time to send it at `bodyBytesPerSecond`, whichever is longer.
    package var requestSeconds = 10.0
    /// How long a client may take to read what it is sent.
    package var sendSeconds = 30.0
    /// An event stream sends a comment after this long without events.
    package var keepAliveSeconds = 15.0
    /// An event stream whose results stay as they are while the log moves on sends a `progress`
    /// event after this long without events (0: never); a subscription may ask for another
    /// interval (`?progress=`).
    package var progressSeconds = ProgressSchedule.defaultSeconds

    /// The defaults, on the Unix socket at `socketPath`.
    package init(socketPath: String) { self.socketPath = socketPath }

    /// The slowest body upload a request's deadline allows for.
    package static let bodyBytesPerSecond = 256 << 10

    /// How long the body of a request of `length` bytes may take to arrive.
    package func bodySeconds(_ length: Int) -> Double {
        max(requestSeconds, Double(length) / Double(Self.bodyBytesPerSecond))
    }
}
