import CNATS

#if canImport(Glibc)
    import Glibc
#endif

/// A connection to a NATS server (or cluster) and its JetStream context, through the official C client.
///
/// The client is thread-safe: one connection serves every thread of a process. Requests block the
/// calling thread until the server answers or `timeout` passes; a lost connection is reconnected by
/// the client itself, forever, while requests made meanwhile fail as `.unavailable`.
package final class JetStreamConnection: @unchecked Sendable {
    private let connection: OpaquePointer
    private let context: OpaquePointer
    /// How long a request waits for its answer, in milliseconds.
    package let timeoutMilliseconds: Int64

    /// Connects to the first of `servers` (`nats://host:port` URLs) that answers.
    ///
    /// - Parameters:
    ///   - name: the connection's name, as the server's monitoring shows it.
    ///   - timeout: how long a connection attempt and each request may take, in seconds.
    /// - Throws: `JetStreamError` (`.unavailable` when no server answers).
    package init(servers: [String], name: String, timeout: Double) throws {
        precondition(!servers.isEmpty, "a connection needs at least one server")
        let milliseconds = Int64((timeout * 1000).rounded())
        timeoutMilliseconds = max(1, milliseconds)
        var options: OpaquePointer?
        var status = natsOptions_Create(&options)
        guard status == NATS_OK, let options else {
            throw JetStreamError(status: status, doing: "creating the NATS options")
        }
        defer { natsOptions_Destroy(options) }
        status = withCStrings(servers) { pointers in
            natsOptions_SetServers(options, pointers.baseAddress, Int32(servers.count))
        }
        if status == NATS_OK { status = natsOptions_SetName(options, name) }
        if status == NATS_OK { status = natsOptions_SetTimeout(options, timeoutMilliseconds) }
        // Reconnect for ever, quickly: a node cut off from the cluster comes back by itself.
        if status == NATS_OK { status = natsOptions_SetMaxReconnect(options, -1) }
        if status == NATS_OK { status = natsOptions_SetReconnectWait(options, 250) }
        guard status == NATS_OK else { throw JetStreamError(status: status, doing: "setting the NATS options") }
        var connection: OpaquePointer?
        status = natsConnection_Connect(&connection, options)
        guard status == NATS_OK, let connection else {
            throw JetStreamError(
                status: status, doing: "connecting to NATS at \(servers.joined(separator: ", "))")
        }
        var jsOptions = jsOptions()
        jsOptions_Init(&jsOptions)
        jsOptions.Wait = timeoutMilliseconds
        var context: OpaquePointer?
        status = natsConnection_JetStream(&context, connection, &jsOptions)
        guard status == NATS_OK, let context else {
            natsConnection_Destroy(connection)
            throw JetStreamError(status: status, doing: "opening JetStream")
        }
        self.connection = connection
        self.context = context
    }

    deinit {
        jsCtx_Destroy(context)
        natsConnection_Close(connection)
        natsConnection_Destroy(connection)
    }

    /// Whether the client is connected to a server now (not reconnecting, not closed).
    package var isConnected: Bool { natsConnection_Status(connection) == NATS_CONN_STATUS_CONNECTED }

    // MARK: - Streams

    /// The sequence numbers a stream holds.
    package struct StreamState: Sendable, Hashable {
        /// The first message's sequence; the last's + 1 when the stream holds none.
        package var first: UInt64
        /// The last message's sequence, 0 when the stream never held one.
        package var last: UInt64
        /// The subjects the stream takes.
        package var subjects: [String]
        /// How many servers keep each message.
        package var replicas: Int
    }

    /// The stream `name`, created with `subject` and `replicas` when it does not exist.
    ///
    /// An existing stream is kept as it is, whatever its settings: its retention and replicas are
    /// its operator's.
    package func ensureStream(named name: String, subject: String, replicas: Int) throws -> StreamState {
        do {
            return try streamState(named: name)
        } catch let error as JetStreamError where error.kind == .notFound {
            var config = jsStreamConfig()
            jsStreamConfig_Init(&config)
            try name.withCString { cName in
                try subject.withCString { cSubject in
                    var subjects: [UnsafePointer<CChar>?] = [cSubject]
                    return try subjects.withUnsafeMutableBufferPointer { subjectList in
                        config.Name = cName
                        config.Subjects = subjectList.baseAddress
                        config.SubjectsLen = 1
                        config.Storage = js_FileStorage
                        config.Replicas = Int64(replicas)
                        var info: UnsafeMutablePointer<jsStreamInfo>?
                        var code = jsErrCode(0)
                        let status = js_AddStream(&info, context, &config, nil, &code)
                        // Another node created it at the same moment: it is read below.
                        guard status == NATS_OK || code == JSStreamNameExistErr else {
                            throw JetStreamError(status: status, code: code, doing: "creating the stream \(name)")
                        }
                        jsStreamInfo_Destroy(info)
                    }
                }
            }
            return try streamState(named: name)
        }
    }

    /// The state of the stream `name`.
    ///
    /// - Throws: `JetStreamError` with `.notFound` when there is no such stream.
    package func streamState(named name: String) throws -> StreamState {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(0)
        let status = js_GetStreamInfo(&info, context, name, nil, &code)
        guard status == NATS_OK, let info else {
            throw JetStreamError(status: status, code: code, doing: "reading the stream \(name)")
        }
        defer { jsStreamInfo_Destroy(info) }
        let config = info.pointee.Config.pointee
        var subjects: [String] = []
        for index in 0..<Int(config.SubjectsLen) {
            if let subject = config.Subjects[index] { subjects.append(String(cString: subject)) }
        }
        return StreamState(
            first: info.pointee.State.FirstSeq, last: info.pointee.State.LastSeq, subjects: subjects,
            replicas: Int(config.Replicas))
    }

    /// Deletes the stream `name` and every message in it.
    package func deleteStream(named name: String) throws {
        var code = jsErrCode(0)
        let status = js_DeleteStream(context, name, nil, &code)
        guard status == NATS_OK else { throw JetStreamError(status: status, code: code, doing: "deleting \(name)") }
    }

    // MARK: - Messages

    /// What the stream answered to a publish.
    package struct Acknowledgement: Sendable, Hashable {
        /// The message's sequence in the stream.
        package var sequence: UInt64
        /// The stream already held a message with this id (within its duplicate window): nothing
        /// was stored again, and `sequence` is the first one's.
        package var duplicate: Bool

        package init(sequence: UInt64, duplicate: Bool) {
            self.sequence = sequence
            self.duplicate = duplicate
        }
    }

    /// Publishes `payload` on `subject`, stored only when the stream's last message is
    /// `expectedLast` (0: the stream is empty), and only once per `messageID`.
    ///
    /// The acknowledgement comes once the stream's replicas have stored the message.
    ///
    /// - Throws: `JetStreamError`: `.wrongLastSequence` when another message came first (nothing
    ///   was stored); `.unavailable` when no answer came in time (the message may be stored:
    ///   publishing it again with the same id tells).
    package func publish(
        _ payload: [UInt8], subject: String, messageID: String, expectedLast: UInt64
    ) throws -> Acknowledgement {
        var message: OpaquePointer?
        var status = payload.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) {
                natsMsg_Create(&message, subject, nil, $0.baseAddress, Int32(payload.count))
            }
        }
        guard status == NATS_OK, let message else {
            throw JetStreamError(status: status, doing: "making a message for \(subject)")
        }
        defer { natsMsg_Destroy(message) }
        // The headers themselves, since the client's option reads an expected sequence of 0 as none.
        status = natsMsgHeader_Set(message, "Nats-Msg-Id", messageID)
        if status == NATS_OK { status = natsMsgHeader_Set(message, "Nats-Expected-Last-Sequence", "\(expectedLast)") }
        guard status == NATS_OK else { throw JetStreamError(status: status, doing: "setting a message's headers") }
        var ack: UnsafeMutablePointer<jsPubAck>?
        var code = jsErrCode(0)
        status = js_PublishMsg(&ack, context, message, nil, &code)
        guard status == NATS_OK, let ack else {
            throw JetStreamError(status: status, code: code, doing: "publishing on \(subject)")
        }
        defer { jsPubAck_Destroy(ack) }
        return Acknowledgement(sequence: ack.pointee.Sequence, duplicate: ack.pointee.Duplicate)
    }

    /// The payload of message `sequence` of the stream `name`, nil when the stream does not hold it
    /// (never stored, or removed by the stream's limits).
    package func message(_ sequence: UInt64, stream name: String) throws -> [UInt8]? {
        var message: OpaquePointer?
        var code = jsErrCode(0)
        let status = js_GetMsg(&message, context, name, sequence, nil, &code)
        if code == JSNoMessageFoundErr || status == NATS_NOT_FOUND { return nil }
        guard status == NATS_OK, let message else {
            throw JetStreamError(status: status, code: code, doing: "reading message \(sequence) of \(name)")
        }
        defer { natsMsg_Destroy(message) }
        return Self.payload(of: message)
    }

    /// An ordered subscription to the stream `name`, from message `sequence` on.
    package func subscribe(stream name: String, subject: String, from sequence: UInt64) throws -> JetStreamSubscription
    {
        try JetStreamSubscription(context: context, stream: name, subject: subject, from: sequence)
    }

    static func payload(of message: OpaquePointer) -> [UInt8] {
        let count = Int(natsMsg_GetDataLength(message))
        guard count > 0, let data = natsMsg_GetData(message) else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: count) {
            Array(UnsafeBufferPointer(start: $0, count: count))
        }
    }
}

/// Calls `body` with C strings of `strings`, valid during the call.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafeMutableBufferPointer<UnsafePointer<CChar>?>) -> R) -> R
{
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    var pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } }
    return pointers.withUnsafeMutableBufferPointer { body($0) }
}
