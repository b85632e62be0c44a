import CNATS

/// A failure of the NATS client or of a JetStream request, with what it was doing.
package struct JetStreamError: Error, Sendable, CustomStringConvertible {
    package enum Kind: Sendable, Hashable {
        /// No server answered in time, none was reachable, or the cluster has no leader for the
        /// request now: the request's outcome is unknown (a publish may still have been stored).
        case unavailable
        /// The stream's last message is not the one the publish expected: another publisher
        /// appended first. Nothing was stored.
        case wrongLastSequence
        /// The stream or the message asked for does not exist.
        case notFound
        /// Any other refusal or failure.
        case failed
    }

    package var kind: Kind
    /// What failed, and why, in words.
    package var message: String
    /// The client's status code (`natsStatus`), 0 when none.
    package var status: Int32
    /// JetStream's error code (`jsErrCode`), 0 when none.
    package var code: Int32

    package init(_ kind: Kind, _ message: String, status: Int32 = 0, code: Int32 = 0) {
        self.kind = kind
        self.message = message
        self.status = status
        self.code = code
    }

    package var description: String { message }

    /// JetStream's refusals while a cluster has no leader for its metadata, the stream or the
    /// consumer (a server down, an election under way, a quorum lost): they pass once the cluster
    /// has one again, so they are `.unavailable`, like a timeout, and not failures of the request.
    static let transientCodes: [jsErrCode] = [
        JSClusterNotAvailErr, JSClusterNotLeaderErr, JSStreamOfflineErr, JSConsumerOfflineErr,
    ]

    /// The error for `status` (and JetStream's `code`) returned by the client while `doing` something.
    init(status: natsStatus, code: jsErrCode = jsErrCode(0), doing action: String) {
        let text = String(cString: natsStatus_GetText(status))
        let kind: Kind
        if code == JSStreamWrongLastSequenceErr {
            kind = .wrongLastSequence
        } else if code == JSStreamNotFoundErr || code == JSNoMessageFoundErr || status == NATS_NOT_FOUND {
            kind = .notFound
        } else if [
            NATS_TIMEOUT, NATS_NO_RESPONDERS, NATS_NO_SERVER, NATS_CONNECTION_CLOSED, NATS_CONNECTION_DISCONNECTED,
            NATS_STALE_CONNECTION, NATS_IO_ERROR,
        ].contains(status) || Self.transientCodes.contains(code) {
            kind = .unavailable
        } else {
            kind = .failed
        }
        var detail = text
        if code.rawValue != 0 { detail += " (JetStream error \(code.rawValue))" }
        if let last = nats_GetLastError(nil).map({ String(cString: $0) }), !last.isEmpty, !detail.contains(last) {
            detail += ": " + last
        }
        self.init(kind, "\(action) failed: \(detail)", status: Int32(status.rawValue), code: Int32(code.rawValue))
    }
}
