import NATSJetStream
import Rill

/// A store's replicated log in a NATS JetStream stream: one subject, `rill.<stream>.commits`,
/// whose message sequence is the commit sequence.
package final class JetStreamLog: LogReplica {
    package let name: String
    private let connection: JetStreamConnection
    private let stream: String
    private let subject: String

    /// Connects to `servers` and opens the stream `stream`, creating it with `replicas` copies
    /// of each message when it does not exist.
    ///
    /// - Throws: `.replicationUnavailable` when no server answers; `.invalidConfiguration` when the
    ///   stream exists and takes other subjects than this log's.
    package init(servers: [String], stream: String, replicas: Int = 1, timeout: Double = 5) throws {
        self.stream = stream
        subject = "rill.\(stream).commits"
        name = "\(servers.joined(separator: ","))/\(stream)"
        do {
            connection = try JetStreamConnection(servers: servers, name: "rill \(stream)", timeout: timeout)
            let state = try connection.ensureStream(named: stream, subject: subject, replicas: replicas)
            guard state.subjects == [subject] else {
                throw RillError(
                    .invalidConfiguration,
                    "the stream \(stream) takes \(state.subjects.joined(separator: ", ")), not \(subject) alone: "
                        + "it is not a Rill log")
            }
        } catch let error as JetStreamError {
            throw Self.translate(error)
        }
    }

    package func last() throws -> UInt64 {
        do { return try connection.streamState(named: stream).last } catch let error as JetStreamError {
            throw Self.translate(error)
        }
    }

    package func append(_ entry: [UInt8], after sequence: UInt64, id: String) throws -> UInt64? {
        do {
            return try connection.publish(entry, subject: subject, messageID: id, expectedLast: sequence).sequence
        } catch let error as JetStreamError where error.kind == .wrongLastSequence {
            return nil
        } catch let error as JetStreamError {
            throw Self.translate(error)
        }
    }

    package func entry(_ sequence: UInt64) throws -> [UInt8]? {
        do { return try connection.message(sequence, stream: stream) } catch let error as JetStreamError {
            throw Self.translate(error)
        }
    }

    package func follow(from sequence: UInt64) throws -> any LogReplicaFeed {
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
