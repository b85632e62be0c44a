import NATSJetStream
import Rill
import RillLocks

/// A store's replicated log in a NATS JetStream stream: one subject, `rill.<stream>.commits`,
/// whose message sequence is the commit sequence.
///
/// It connects when first used, and again after a connection attempt failed: a node started
/// while no server answers opens its store, answers queries from it, and fails its saves with
/// `.replicationUnavailable` until a server does.
package final class JetStreamLog: LogReplica {
    package let name: String
    private let servers: [String]
    private let stream: String
    private let subject: String
    private let replicas: Int
    private let timeout: Double
    private let connection = Lock<JetStreamConnection?>(nil)

    /// A log in the stream `stream` of the cluster at `servers`, created with `replicas` copies of
    /// each message when it does not exist.
    ///
    /// - Parameter connects: whether to connect now, so that a server that does not answer or a
    ///   stream that is not a log throws here rather than at first use.
    /// - Throws: `.replicationUnavailable` when no server answers; `.invalidConfiguration` when the
    ///   stream exists and takes other subjects than this log's.
    package init(
        servers: [String], stream: String, replicas: Int = 1, timeout: Double = 5, connects: Bool = true
    ) throws {
        self.servers = servers
        self.stream = stream
        self.replicas = replicas
        self.timeout = timeout
        subject = "rill.\(stream).commits"
        name = "nats://\(servers.map(Self.hostAndPort).joined(separator: ","))/\(stream)"
        if connects { _ = try connected() }
    }

    /// `host:port` of a server URL.
    private static func hostAndPort(_ server: String) -> String {
        server.hasPrefix("nats://") ? String(server.dropFirst("nats://".count)) : server
    }

    /// The connection, made (and the stream opened) when there is none yet.
    private func connected() throws -> JetStreamConnection {
        try connection.withLock { connection in
            if let connection { return connection }
            do {
                let made = try JetStreamConnection(servers: servers, name: "rill \(stream)", timeout: timeout)
                let state = try made.ensureStream(named: stream, subject: subject, replicas: replicas)
                guard state.subjects == [subject] else {
                    throw RillError(
                        .invalidConfiguration,
                        "the stream \(stream) takes \(state.subjects.joined(separator: ", ")), not \(subject) "
                            + "alone: it is not a Rill log")
                }
                connection = made
                return made
            } catch let error as JetStreamError {
                throw Self.translate(error)
            }
        }
    }

    package func last() throws -> UInt64 {
        let connection = try connected()
        do { return try connection.streamState(named: stream).last } catch let error as JetStreamError {
            throw Self.translate(error)
        }
    }

    package func append(_ entry: [UInt8], after sequence: UInt64, id: String) throws -> UInt64? {
        let connection = try connected()
        do {
            return try connection.publish(entry, subject: subject, messageID: id, expectedLast: sequence).sequence
        } catch let error as JetStreamError where error.kind == .wrongLastSequence {
            return nil
        } catch let error as JetStreamError {
            throw Self.translate(error)
        }
    }

    package func entry(_ sequence: UInt64) throws -> [UInt8]? {
        let connection = try connected()
        do { return try connection.message(sequence, stream: stream) } catch let error as JetStreamError {
            throw Self.translate(error)
        }
    }

    package func follow(from sequence: UInt64) throws -> any LogReplicaFeed {
        let connection = try connected()
        do {
            return Feed(try connection.subscribe(stream: stream, subject: subject, from: sequence))
        } catch let error as JetStreamError {
            throw Self.translate(error)
        }
    }

    private final class Feed: LogReplicaFeed {
        let subscription: JetStreamSubscription
        init(_ subscription: JetStreamSubscription) { self.subscription = subscription }

        func next(timeout: Double) throws -> (sequence: UInt64, entry: [UInt8])? {
            do {
                return try subscription.next(timeout: timeout).map { ($0.sequence, $0.payload) }
            } catch let error as JetStreamError {
                throw JetStreamLog.translate(error)
            }
        }
    }

    static func translate(_ error: JetStreamError) -> RillError {
        switch error.kind {
        case .unavailable: RillError(.replicationUnavailable, error.message, underlyingError: error)
        case .notFound, .wrongLastSequence: RillError(.replicationDiverged, error.message, underlyingError: error)
        case .failed: RillError(.storage, error.message, underlyingError: error)
        }
    }
}
