import CNATS

/// An ordered consumer of a stream: its messages in sequence order, each once, from a chosen
/// sequence on, read by one thread with ``next(timeout:)``.
///
/// An ordered consumer is the server's lightest kind: no acknowledgements, no state kept for it
/// once it goes. The client recreates it where it left off when the server or the connection was
/// lost meanwhile, so no message is skipped or repeated.
package final class JetStreamSubscription: @unchecked Sendable {
    private let subscription: OpaquePointer
    /// The stream, for errors.
    private let stream: String

    init(context: OpaquePointer, stream name: String, subject: String, from sequence: UInt64) throws {
        var options = jsSubOptions()
        jsSubOptions_Init(&options)
        var subscription: OpaquePointer?
        var code = jsErrCode(0)
        let status = name.withCString { cName in
            options.Stream = cName
            options.Ordered = true
            options.Config.DeliverPolicy = js_DeliverByStartSequence
            options.Config.OptStartSeq = max(1, sequence)
            return js_SubscribeSync(&subscription, context, subject, nil, &options, &code)
        }
        guard status == NATS_OK, let subscription else {
            throw JetStreamError(
                status: status, code: code, doing: "subscribing to \(name) from message \(sequence)")
        }
        self.subscription = subscription
        self.stream = name
    }

    deinit {
        natsSubscription_Unsubscribe(subscription)
        natsSubscription_Destroy(subscription)
    }

    /// The next message (its stream sequence and payload), waiting up to `timeout` seconds; nil
    /// when none came in that time.
    package func next(timeout: Double) throws -> (sequence: UInt64, payload: [UInt8])? {
        var message: OpaquePointer?
        let status = natsSubscription_NextMsg(&message, subscription, max(1, Int64((timeout * 1000).rounded())))
        if status == NATS_TIMEOUT { return nil }
        guard status == NATS_OK, let message else {
            throw JetStreamError(status: status, doing: "reading the stream \(stream)")
        }
        defer { natsMsg_Destroy(message) }
        var metadata: UnsafeMutablePointer<jsMsgMetaData>?
        let read = natsMsg_GetMetaData(&metadata, message)
        guard read == NATS_OK, let metadata else {
            throw JetStreamError(status: read, doing: "reading a message's sequence in \(stream)")
        }
        defer { jsMsgMetaData_Destroy(metadata) }
        return (metadata.pointee.Sequence.Stream, JetStreamConnection.payload(of: message))
    }
}
