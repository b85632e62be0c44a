import Foundation
import RillHTTP
import RillService

#if canImport(Glibc)
    import Glibc
#endif

/// A subscription to `rill serve` (`rill watch --connect`): reads its Server-Sent Events, and
/// when the connection drops, connects again with the last event's id, so that no change is
/// lost or repeated.
///
/// Every event with an id moves the resume position: a change, results, and the `progress`
/// events a daemon sends while the results stay as they are and the log moves on — handed to
/// `handle` like the others (their data is `{"seq":N}`), so that a subscriber of a quiet query
/// reconnects after the commits that changed nothing for it rather than replaying them.
///
/// No daemon answering is a failure, at the start or when connecting again after a drop,
/// unless the client is `retrying`: a watch of an address where nothing listens must say so,
/// not wait in silence.
package struct EventStreamClient {
    /// A failure the server reported (an HTTP error with its JSON message): not retried.
    package struct Refused: Error, CustomStringConvertible {
        /// The response's status.
        package var status: Int
        /// The error's message (or the body, when it is not an error body).
        package var message: String

        /// `HTTP <status>: <message>`.
        package var description: String { "HTTP \(status): \(message)" }
    }

    /// No daemon answered at the address (and the client is not retrying).
    package struct Unreachable: Error, CustomStringConvertible {
        /// Where it connected.
        package var address: SocketAddress
        /// Why the connection failed.
        package var cause: any Error
        /// Whether a connection had been made before (and dropped).
        package var afterDrop: Bool

        /// What failed, and how to start a daemon or wait for one.
        package var description: String {
            let what =
                afterDrop
                ? "the connection to \(address) dropped, and no daemon answers there now"
                : "no daemon answers at \(address)"
            return "\(what) (\(cause)); start one with `rill serve <store>`, or pass --retry to wait for it"
        }
    }

    /// The daemon's address.
    package var address: SocketAddress
    /// The text query subscribed to.
    package var query: String
    /// The bearer token, for TCP.
    package var token: String?
    /// The id of the last event received (a `progress` event's too): the next connection
    /// resumes after it.
    package var lastEventID: String?
    /// How often to be sent progress while the results stay as they are (`?progress=`, seconds;
    /// 0: never); nil for the daemon's own interval.
    package var progressSeconds: Double?
    /// Whether to keep connecting when no daemon answers, rather than fail.
    package var retrying = false
    /// Told, in a sentence, of a lost connection or a daemon not answering yet, once per outage.
    package var notice: (String) -> Void

    /// A client of `query` at `address`, resuming after `lastEventID` when given.
    package init(
        address: SocketAddress, query: String, token: String? = nil, lastEventID: String? = nil,
        progressSeconds: Double? = nil, retrying: Bool = false, notice: @escaping (String) -> Void = { _ in }
    ) {
        self.address = address
        self.query = query
        self.token = token
        self.lastEventID = lastEventID
        self.progressSeconds = progressSeconds
        self.retrying = retrying
        self.notice = notice
    }

    /// `store/rill.sock`, a store directory (its socket), `unix:path`, or `http://host:port`.
    package static func address(_ text: String) -> SocketAddress? {
        if text.hasPrefix("http://") {
            let rest = text.dropFirst(7)
            let authority = rest.split(separator: "/", maxSplits: 1).first.map(String.init) ?? ""
            return SocketAddress.tcp(authority.contains(":") ? authority : authority + ":80")
        }
        var path = text.hasPrefix("unix:") ? String(text.dropFirst(5)) : text
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            path = (path as NSString).appendingPathComponent("rill.sock")
        }
        return .unix(path)
    }

    /// Follows the stream, calling `handle` with each event, until the server refuses or (when
    /// not retrying) cannot be reached — both thrown — reconnecting after a dropped connection.
    package mutating func run(_ handle: (ServerSentEvent) -> Void) throws {
        // Attempts in a row that delivered no event: they wait longer and longer before the next.
        var failures = 0
        var everConnected = false
        while true {
            var connected = false
            var delivered = false
            do {
                try follow(connected: { connected = true }) { event in
                    delivered = true
                    handle(event)
                }
            } catch let refused as Refused where !(retrying && refused.status == 503) {
                // A refusal is an answer, not an absence: only a full daemon's (503) is waited out.
                throw refused
            } catch {
                if !connected, !retrying {
                    throw Unreachable(address: address, cause: error, afterDrop: everConnected)
                }
                if connected, failures == 0 {
                    notice("lost the connection to \(address) (\(error)); reconnecting")
                } else if !connected, failures == 0, !everConnected {
                    let what = error is Refused ? "the daemon at \(address) is full" : "no daemon answers at \(address)"
                    notice("\(what) (\(error)); retrying")
                }
                everConnected = everConnected || connected
                failures = delivered ? 0 : failures + 1
            }
            // A stream that dropped is connected again at once; a daemon that does not answer,
            // less and less often.
            if failures > 0 { usleep(UInt32(min(failures, 5)) * 500_000) }
        }
    }

    /// One connection: the request, the response head, then events until the stream ends.
    /// `connected` is called once the server accepted the subscription (a 200 response).
    private mutating func follow(connected: () -> Void, _ handle: (ServerSentEvent) -> Void) throws {
        let fd = try Socket.connect(address)
        defer { close(fd) }
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&+=?#")
        let encoded = query.addingPercentEncoding(withAllowedCharacters: allowed) ?? query
        let progress = progressSeconds.map { "&progress=\($0)" } ?? ""
        var request =
            "GET /v1/subscribe?q=\(encoded)\(progress) HTTP/1.1\r\nHost: rill\r\nAccept: text/event-stream\r\n"
        if let token { request += "Authorization: Bearer \(token)\r\n" }
        if let lastEventID { request += "Last-Event-ID: \(lastEventID)\r\n" }
        request += "\r\n"
        guard Socket.write(fd, Array(request.utf8)) else { throw SocketError("send") }

        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        func readMore() throws -> Bool {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { return true }
            guard count > 0 else {
                if count < 0 { throw SocketError("recv") }
                return false
            }
            buffer.append(contentsOf: chunk[0..<count])
            return true
        }
        // The response head.
        var headEnd: Int?
        while headEnd == nil {
            headEnd = buffer.indices.dropLast(3).first { buffer[$0..<$0 + 4].elementsEqual([13, 10, 13, 10]) }
            if headEnd == nil, try !readMore() { throw SocketError("the server closed the connection", ECONNRESET) }
        }
        let head = String(decoding: buffer[0..<headEnd!], as: UTF8.self)
        buffer.removeSubrange(0..<headEnd! + 4)
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        guard status == 200 else {
            // An error body: read it whole (the server closes or sends Content-Length).
            let length =
                head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? Int.max
            while buffer.count < length, try readMore() {}
            let body = String(decoding: buffer.prefix(length), as: UTF8.self)
            let message = ServiceError.message(fromJSON: body) ?? body
            throw Refused(status: status, message: message.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        connected()
        // Events: lines up to a blank one.
        var parser = ServerSentEventParser()
        while true {
            while let newline = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[0..<newline], as: UTF8.self)
                buffer.removeSubrange(0...newline)
                if let event = parser.take(line: line) {
                    if let id = event.id { lastEventID = id }
                    handle(event)
                }
            }
            guard try readMore() else { throw SocketError("the server ended the stream", ECONNRESET) }
        }
    }
}
