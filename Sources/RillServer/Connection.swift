import Foundation
import Rill
import RillHTTP
import RillLocks
import RillService
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One client connection of `rill serve`, served on its own thread: requests one after the
/// other (keep-alive), or one event stream.
///
/// Every read has a deadline: the connection's idle time between requests, then a request's
/// head within `requestSeconds` of its first byte, then its body in proportion to its length
/// (``ServerOptions``). A client that dribbles its bytes therefore holds its connection for a
/// bounded time, however steadily it sends.
final class Connection: @unchecked Sendable {
    // Sendable: `phase` is behind its lock; `subscription` is set once, before it is shared;
    // `authenticated` is used by the connection's own thread only.
    let fd: Int32
    unowned let server: Server
    let needsToken: Bool
    /// The client, as log lines name it (``ClientAddress``).
    let client: String
    private let phase = Lock(Phase.idle)
    private var subscription: Subscription?
    /// A TCP connection is unauthenticated until a request of it shows the token.
    private var authenticated = false

    private enum Phase {
        case idle, busy, streaming
        /// Asked to stop while streaming: the stream ends at its next wait for events, or is cut
        /// (``cutStream()``) when its last write is still blocked `streamStopGrace` later.
        case endingStream
        /// Asked to stop, or `serve()` has returned: the descriptor is not to be touched again.
        case stopped
    }

    /// How long a stream being stopped may take to finish the write it is in. A client that
    /// reads takes it at once; one that does not would hold the daemon's stop for the whole
    /// send timeout (`sendSeconds`), so its socket is shut down instead.
    static let streamStopGrace = 1.0

    init(fd: Int32, server: Server, needsToken: Bool) {
        self.fd = fd
        self.server = server
        self.needsToken = needsToken
        client = ClientAddress.describe(fd, tcp: needsToken)
    }

    /// Ends the connection at its next quiet moment: at once when idle, after the response when
    /// busy (a save in flight is committed and answered); an event stream ends at once, its
    /// socket shut down when its client has not taken the last write `streamStopGrace` later.
    func stop() {
        let streaming = phase.withLock { phase -> Bool in
            switch phase {
            case .idle:
                // Under the lock, which `serve()` marks `.stopped` before its descriptor is closed:
                // never a descriptor that was closed and reused meanwhile.
                shutdown(fd, Int32(SHUT_RD))
                phase = .stopped
            case .busy:
                phase = .stopped
            case .streaming:
                phase = .endingStream
                return true
            case .endingStream, .stopped:
                break
            }
            return false
        }
        guard streaming else { return }
        subscription?.close()
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.streamStopGrace) { [self] in cutStream() }
    }

    /// Shuts down the socket of a stream that is still ending: its write, blocked on a client
    /// that does not read, fails at once instead of after the send timeout.
    private func cutStream() {
        phase.withLock { phase in
            guard phase == .endingStream else { return }
            shutdown(fd, Int32(SHUT_RDWR))
        }
    }

    func serve() {
        // The server closes the descriptor once this returns: `stop()` must leave it alone then.
        defer { phase.withLock { $0 = .stopped } }
        let options = server.options
        // Reads wait on deadlines of their own (below); a send may block up to `sendSeconds`.
        Socket.setTimeouts(fd, receive: options.idleSeconds, send: options.sendSeconds)
        var reader = HTTPRequestReader(limits: options.limits)
        // Small while requests are: an idle connection holds little. It grows to 64 KiB once a
        // read fills it (a large body), for fewer reads.
        var buffer = [UInt8](repeating: 0, count: 4 << 10)
        var waitingSince = Self.now()
        var requestStarted: UInt64?
        var bodyDeadline: UInt64?
        while true {
            let request: HTTPRequest?
            do {
                request = try reader.next()
            } catch {
                let context = LogContext(requestID: RequestID.make(), client: client, status: error.status)
                Log.warning("bad request: \(error.message)", context)
                server.metrics.countRejection(status: error.status, reason: error.code)
                var response = HTTPResponse.error(error)
                response.headers.append((RequestID.header, context.requestID))
                _ = Socket.write(fd, response.serialized(keepAlive: false))
                return
            }
            if let request {
                guard begin() else { return }
                let keepAlive = handle(request)
                // A large body, and what was parsed from it, are free again: return the pages.
                if request.body.count > 1 << 20 { MemoryTrim.soon() }
                guard end(), keepAlive else { return }
                waitingSince = Self.now()
                requestStarted = reader.buffer.isEmpty ? nil : waitingSince
                bodyDeadline = nil
                continue
            }
            if let head = reader.head, bodyDeadline == nil {
                // Over TCP the token is checked as soon as the head is in: a client without it
                // does not get to send a body.
                if needsToken, !authenticated, head.method != "OPTIONS", !WebPageAsset.isPagePath(head.path) {
                    do {
                        try authorize(head)
                    } catch {
                        let id = RequestID.id(given: head.headers["x-request-id"])
                        _ = respond(to: head, with: error, id: id, started: Self.now(), keepAlive: false)
                        return
                    }
                }
                bodyDeadline = Self.now() + Self.nanoseconds(options.bodySeconds(reader.bodyLength ?? 0))
            }
            let deadline: UInt64
            if let bodyDeadline {
                deadline = bodyDeadline
            } else if let requestStarted {
                deadline = requestStarted + Self.nanoseconds(options.requestSeconds)
            } else {
                // Waiting for a request: a connection that has not authenticated may wait as long
                // as a request may take, no longer.
                let trusted = !needsToken || authenticated || options.token == nil
                deadline = waitingSince + Self.nanoseconds(trusted ? options.idleSeconds : options.requestSeconds)
            }
            if Socket.wait(fd, until: deadline) == .timedOut {
                if !reader.buffer.isEmpty {
                    let timeout = HTTPError(
                        status: 408, code: "requestTimeout", message: "the request was not sent in time")
                    let context = LogContext(requestID: RequestID.make(), client: client, status: timeout.status)
                    server.metrics.countRejection(status: timeout.status, reason: timeout.code)
                    var response = HTTPResponse.error(timeout)
                    response.headers.append((RequestID.header, context.requestID))
                    _ = Socket.write(fd, response.serialized(keepAlive: false))
                }
                return
            }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                buffer.withUnsafeBytes { reader.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                if count == buffer.count, buffer.count < 64 << 10 { buffer = [UInt8](repeating: 0, count: 64 << 10) }
                if requestStarted == nil { requestStarted = Self.now() }
                continue
            }
            if count < 0, errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
            return
        }
    }

    private static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    private static func nanoseconds(_ seconds: Double) -> UInt64 { UInt64(max(seconds, 0) * 1e9) }

    /// Marks the connection busy; false when it is stopping.
    private func begin() -> Bool {
        phase.withLock { phase in
            guard phase == .idle else { return false }
            phase = .busy
            return true
        }
    }

    /// Marks the connection idle; false when it was asked to stop meanwhile.
    private func end() -> Bool {
        phase.withLock { phase in
            guard phase == .busy else { return false }
            phase = .idle
            return true
        }
    }

    // MARK: - Requests

    /// Handles one request; returns whether the connection stays open.
    private func handle(_ request: HTTPRequest) -> Bool {
        let started = Self.now()
        let cors = corsHeaders(request)
        let id = RequestID.id(given: request.headers["x-request-id"])
        if request.method == "OPTIONS" {
            // A browser's preflight: answered without a token, as CORS requires.
            var response = HTTPResponse(status: 204, headers: cors + [(RequestID.header, id)])
            server.metrics.requests.wrappingAdd(1, ordering: .relaxed)
            if !cors.isEmpty {
                response.headers += [
                    ("Access-Control-Allow-Methods", "GET, POST, OPTIONS"),
                    ("Access-Control-Allow-Headers", "Authorization, Content-Type, Last-Event-ID, X-Request-Id"),
                    ("Access-Control-Max-Age", "600"),
                ]
            }
            return Socket.write(fd, response.serialized(keepAlive: request.keepAlive)) && request.keepAlive
        }
        if WebPageAsset.isPagePath(request.path) {
            // The page holds no data: served without a token (Protocol.md, "The web page").
            let keepAlive = request.keepAlive && !server.isStopping
            let response = WebPageAsset.response(to: request)
            return respond(to: request, with: response, id: id, started: started, keepAlive: keepAlive) && keepAlive
        }
        var response = HTTPResponse(status: 500)
        var failure: HTTPError?
        do {
            try authorize(request)
            if needsToken, !authenticated {
                guard server.authenticated(self) else {
                    throw HTTPError(
                        status: 503, code: "tooManyConnections",
                        message:
                            "the daemon serves \(server.options.maxConnections) TCP connections at most; try again later",
                        closesConnection: true)
                }
                authenticated = true
            }
            try Self.checkParameters(of: request)
            if request.path == "/v1/subscribe" {
                guard request.method == "GET" else { throw methodNotAllowed(request, "GET") }
                try stream(request, cors: cors, context: LogContext(requestID: id, client: client))
                return false
            }
            response = try route(request)
        } catch let error as HTTPError {
            failure = error
        } catch let error as ServiceError {
            failure = HTTPError(error)
        } catch let error as RillError {
            failure = HTTPError(ServiceError(error))
        } catch {
            failure = HTTPError(status: 500, code: "internal", message: "\(error)")
        }
        let keepAlive = request.keepAlive && failure?.closesConnection != true && !server.isStopping
        if let failure {
            return respond(to: request, with: failure, id: id, started: started, keepAlive: keepAlive) && keepAlive
        }
        return respond(to: request, with: response, id: id, started: started, keepAlive: keepAlive) && keepAlive
    }

    /// CORS headers for a request over TCP from an allowed origin.
    private func corsHeaders(_ request: HTTPRequest) -> [(String, String)] {
        guard needsToken, let origin = request.headers["origin"], server.options.allowedOrigins.contains(origin)
        else { return [] }
        return [
            ("Access-Control-Allow-Origin", origin), ("Vary", "Origin"),
            ("Access-Control-Expose-Headers", RequestID.header),
        ]
    }

    /// Answers `request` with `failure`, counted as a rejection by its status and code.
    private func respond(
        to request: HTTPRequest, with failure: HTTPError, id: String, started: UInt64, keepAlive: Bool
    ) -> Bool {
        server.metrics.countRejection(status: failure.status, reason: failure.code)
        return respond(to: request, with: .error(failure), id: id, started: started, keepAlive: keepAlive)
    }

    /// Logs the request's outcome and writes `response` (with CORS headers and the request id) in
    /// one write; false when the client is gone.
    private func respond(
        to request: HTTPRequest, with response: HTTPResponse, id: String, started: UInt64, keepAlive: Bool
    ) -> Bool {
        var response = response
        response.headers += corsHeaders(request)
        response.headers.append((RequestID.header, id))
        server.metrics.requests.wrappingAdd(1, ordering: .relaxed)
        let milliseconds = Double(Self.now() - started) / 1e6
        let context = LogContext(
            requestID: id, client: client, method: request.method, path: request.path, status: response.status,
            milliseconds: milliseconds)
        // Made only for a line that is written: `String(format:)` alone was 1.7% of the daemon's
        // time under `rill-bench serve`, where requests are not logged.
        let status = response.status
        func line() -> String {
            "\(request.method) \(request.path) \(status) (\(String(format: "%.1f", milliseconds)) ms)"
        }
        if status >= 500 {
            Log.error(line() + ": " + Self.excerpt(response.body), context)
        } else if status >= 400 {
            Log.warning(line() + ": " + Self.excerpt(response.body), context)
        } else {
            Log.debug(line(), context)
        }
        return Socket.write(fd, response.serialized(keepAlive: keepAlive))
    }

    /// The most of an error's body a log line holds. An error quotes what it was sent (a query's
    /// text, with a caret line), and a client may send megabytes of it: the log must not grow by
    /// as much at every request.
    static let loggedBodyBytes = 1024

    /// `body` for a log line: whole when short, else its start and its length.
    static func excerpt(_ body: [UInt8]) -> String {
        guard body.count > loggedBodyBytes else { return String(decoding: body, as: UTF8.self) }
        // Decoding a cut sequence gives a replacement character, not an error.
        return String(decoding: body[0..<loggedBodyBytes], as: UTF8.self) + "… (\(body.count) bytes)"
    }

    private func authorize(_ request: HTTPRequest) throws(HTTPError) {
        guard needsToken, let token = server.options.token else { return }
        var given: String?
        if let header = request.headers["authorization"], header.lowercased().hasPrefix("bearer ") {
            given = String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        } else if let parameter = request.parameters["access_token"] {
            // EventSource cannot send headers: the token may come in the URL instead.
            given = parameter
        }
        // The connection is closed after a 401: a client without the token gets that answer
        // and nothing more, and tries another token only on a new connection.
        guard let given else {
            throw HTTPError(
                status: 401, code: "unauthorized", message: "a bearer token is required", closesConnection: true)
        }
        guard Self.constantTimeEqual(Array(given.utf8), Array(token.utf8)) else {
            throw HTTPError(
                status: 401, code: "unauthorized", message: "the bearer token is wrong", closesConnection: true)
        }
    }

    private static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }

    private func methodNotAllowed(_ request: HTTPRequest, _ allowed: String) -> HTTPError {
        HTTPError(
            status: 405, code: "methodNotAllowed", message: "\(request.path) takes \(allowed), not \(request.method)")
    }

    private func route(_ request: HTTPRequest) throws -> HTTPResponse {
        let store = server.store
        switch request.path {
        case "/v1/save":
            guard request.method == "POST" else { throw methodNotAllowed(request, "POST") }
            return try save(request)
        case "/v1/query":
            guard request.method == "GET" || request.method == "POST" else {
                throw methodNotAllowed(request, "GET or POST")
            }
            let query = try Self.query(from: request)
            // The entity's database is opened before the transaction that reads it begins:
            // LMDB does not let a transaction use a database opened after it started. The query
            // is checked against the entity's fields then too, in a transaction of its own.
            _ = try store.entity(named: query.entity)
            if let text = request.parameters["as_of"] {
                guard let position = LogPosition(parsing: text) else {
                    throw HTTPError(
                        status: 400, code: "badParameter", message: "as_of takes \(LogPosition.expected); got '\(text)'"
                    )
                }
                let (rows, sequence) = try store.run(query, asOf: position)
                return .json(200, RecordLiveQuery.resultsJSON(rows, sequence: sequence).jsonString())
            }
            let (sequence, rows) = try store.runWithHead(query)
            return .json(200, RecordLiveQuery.resultsJSON(rows, sequence: sequence).jsonString())
        case "/v1/schema":
            guard request.method == "GET" else { throw methodNotAllowed(request, "GET") }
            let entities = try SchemaDescription.entities(of: store, named: request.parameters["entity"])
            return .json(200, SchemaDescription.json(entities).jsonString())
        case "/v1/subscriptions":
            guard request.method == "GET" else { throw methodNotAllowed(request, "GET") }
            let entries = try store.subscriptions().sorted { $0.key < $1.key }.map {
                RecordValue.map([
                    RecordField(name: "name", value: .string($0.key)), RecordField(name: "seq", value: .uint($0.value)),
                ])
            }
            return .json(
                200, RecordValue.map([RecordField(name: "subscriptions", value: .array(entries))]).jsonString())
        case let path where path.hasPrefix("/v1/subscriptions/"):
            guard request.method == "DELETE" else { throw methodNotAllowed(request, "DELETE") }
            let raw = String(path.dropFirst("/v1/subscriptions/".count))
            let name = raw.removingPercentEncoding ?? raw
            guard try store.removeSubscription(name) else {
                throw HTTPError(status: 404, code: "notFound", message: "no subscription named \"\(name)\"")
            }
            return .json(200, #"{"removed":true}"#)
        case "/v1/history":
            guard request.method == "GET" else { throw methodNotAllowed(request, "GET") }
            return .json(200, try HistoryRequest(parameters: request.parameters).answer(from: store))
        case "/v1/health":
            guard request.method == "GET" else { throw methodNotAllowed(request, "GET") }
            return .json(200, #"{"status":"ok","seq":\#(try store.head())}"#)
        case "/metrics":
            guard request.method == "GET" else { throw methodNotAllowed(request, "GET") }
            let text = try server.metrics.exposition(of: store)
            return HTTPResponse(
                status: 200, headers: [("Content-Type", PrometheusText.contentType)], body: Array(text.utf8))
        default:
            throw HTTPError(
                status: 404, code: "notFound",
                message:
                    "no endpoint \(request.path) (there are /, /v1/save, /v1/query, /v1/subscribe, /v1/history, "
                    + "/v1/schema, /v1/subscriptions, /v1/health, /metrics)"
            )
        }
    }

    /// `POST /v1/save`: `{"author":…,"changes":[…]}` or a bare array of changes; one atomic save.
    private func save(_ request: HTTPRequest) throws -> HTTPResponse {
        let save = try SaveRequest(json: try RecordValue.parsing(body: request.body))
        let started = Self.now()
        let result = try server.store.save(save.changes, author: save.author)
        server.metrics.countSave(nanoseconds: Self.now() - started, result: result)
        return .json(200, result.json)
    }

    /// The query of a request: `?q=` or a body `{"query":"…"}`.
    private static func query(from request: HTTPRequest) throws(ServiceError) -> Query {
        try QueryRequest(parameter: request.parameters["q"], body: request.body).query
    }

    // MARK: - Event streams

    /// `GET /v1/subscribe?q=…`: Server-Sent Events until the client goes or the server stops.
    private func stream(_ request: HTTPRequest, cors: [(String, String)], context: LogContext) throws {
        let query = try Self.query(from: request)
        var since: UInt64?
        if let last = request.headers["last-event-id"] ?? request.parameters["since"], !last.isEmpty {
            guard let value = UInt64(last) else {
                throw HTTPError(status: 400, code: "badEventID", message: "Last-Event-ID must be a commit sequence")
            }
            since = value
        }
        let progressSeconds = try Self.progressSeconds(request.parameters["progress"]) ?? server.options.progressSeconds
        // Resuming replays the commits since then from the log, held in memory: past a bound,
        // or from before the horizon of a compacted log (those commits are gone), the
        // subscriber is sent a reset (the current results) instead.
        var resetInstead = false
        // Related entities' commits are followed live only: a query through relationships
        // resumes with a reset.
        if since != nil, try server.store.readsRelatedRecords(query) {
            since = nil
            resetInstead = true
        }
        if let resumeAfter = since {
            let store = server.store
            let (head, horizon) = try store.read { (try store.log.head(in: $0), try store.log.horizon(in: $0)) }
            // (Subtracted, not added: an id near the largest number must not overflow.)
            if (head > resumeAfter && head - resumeAfter > server.options.resumeLimit)
                || resumeAfter < horizon?.sequence ?? 0
            {
                since = nil
                resetInstead = true
            }
        }
        _ = try server.store.existingEntity(query.entity)
        // A durable subscription keeps the commits after what it was last sent from compaction.
        let durableName = request.parameters["subscription"]
        if let name = durableName {
            guard !name.isEmpty, name.utf8.count <= 200 else {
                throw HTTPError(
                    status: 400, code: "badParameter",
                    message: "subscription takes a name of 1 to 200 bytes; got \(name.utf8.count) bytes")
            }
            if let since { try server.store.setSubscription(name, at: since) }
        }
        let subscription = try Subscription(limit: server.options.subscriberQueue)
        let store = server.store
        // (Commits compacted before the follower read them reload the query: a change, not a failure.)
        let live = try RecordLiveQuery(query, store: store, since: since) { subscription.push($0) }
        self.subscription = subscription
        let streaming = phase.withLock { phase -> Bool in
            guard phase == .busy else { return false }
            phase = .streaming
            return true
        }
        guard streaming else { return }
        let metrics = server.metrics
        metrics.requests.wrappingAdd(1, ordering: .relaxed)
        if resetInstead { metrics.resumeResets.wrappingAdd(1, ordering: .relaxed) }
        metrics.subscribers.wrappingAdd(1, ordering: .relaxed)
        defer { metrics.subscribers.wrappingSubtract(1, ordering: .relaxed) }
        var head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n"
        head += "Cache-Control: no-cache\r\nX-Accel-Buffering: no\r\nConnection: close\r\n"
        head += "\(RequestID.header): \(context.requestID)\r\n"
        for (name, value) in cors { head += "\(name): \(value)\r\n" }
        head += "\r\n" + ServerSentEvent.streamStart
        guard Socket.write(fd, Array(head.utf8)) else { return }
        let text = request.parameters["q"] ?? query.entity
        Log.info("subscriber \(fd) follows '\(text)'\(since.map { " from commit \($0)" } ?? "")", context)
        // What was last sent, and when progress is next looked for (Protocol.md, "Progress").
        var schedule = ProgressSchedule(interval: progressSeconds, sequence: since ?? 0, now: Self.now())
        var lastWrite = Self.now()
        var resets = 0
        // The durable subscription's position: the last commit sent, written at most once a second.
        var sent = since ?? 0
        var registered = since
        var registeredAt: UInt64 = 0
        defer {
            Log.info("subscriber \(fd) ended\(resets > 0 ? " (\(resets) reset(s))" : "")", context)
            withExtendedLifetime(live) {}
            // The live query goes with this scope, and its rows with it.
            MemoryTrim.soon()
        }
        while true {
            var text = ""
            let keepAliveAt = lastWrite + Self.nanoseconds(server.options.keepAliveSeconds)
            let wakeAt = min(keepAliveAt, schedule.deadline ?? .max)
            let waitFrom = Self.now()
            let timeout = wakeAt > waitFrom ? Double(wakeAt - waitFrom) / 1e9 : 0
            switch subscription.next(watching: fd, timeout: timeout) {
            case .ended:
                return
            case .idle:
                let now = Self.now()
                // The report comes through the queue, after every change up to its commit.
                if schedule.shouldAsk(published: live.sequence, now: now) { live.reportProgress() }
                if now >= keepAliveAt { text = ServerSentEvent.keepAlive }
            case .items(let items):
                let now = Self.now()
                for item in items {
                    switch item {
                    case .event(.initial(let rows, let sequence)):
                        text += ServerSentEvent.results(rows, sequence: sequence, reset: resetInstead).framed
                        schedule.restart(at: sequence, now: now)
                        sent = sequence
                    case .event(.change(let change)):
                        guard schedule.send(change.sequence, at: now) else { continue }
                        text += ServerSentEvent.change(change).framed
                        sent = change.sequence
                    case .event(.progress(let sequence)):
                        guard schedule.send(sequence, at: now) else { continue }
                        text += ServerSentEvent.progress(sequence).framed
                        sent = sequence
                    case .event(.failed(let error)):
                        _ = Socket.write(fd, Array((text + ServerSentEvent.failure(error).framed).utf8))
                        return
                    case .reset:
                        // The subscriber fell too far behind: a fresh snapshot replaces what it missed.
                        resets += 1
                        metrics.queueResets.wrappingAdd(1, ordering: .relaxed)
                        let (rows, sequence) = live.results
                        text += ServerSentEvent.results(rows, sequence: sequence, reset: true).framed
                        schedule.restart(at: sequence, now: now)
                        sent = sequence
                    }
                }
            }
            guard !text.isEmpty else { continue }
            guard Socket.write(fd, Array(text.utf8)) else { return }
            lastWrite = Self.now()
            if let name = durableName, registered.map({ sent > $0 }) ?? true,
                registered == nil || lastWrite >= registeredAt + 1_000_000_000
            {
                do {
                    try server.store.setSubscription(name, at: sent)
                    (registered, registeredAt) = (sent, lastWrite)
                } catch {
                    Log.warning(
                        "subscription \(name) of subscriber \(fd) stays at \(registered ?? 0): \(error)", context)
                }
            }
        }
    }

    /// The `progress` parameter of a subscription: seconds, 0 for never; nil when not given.
    private static func progressSeconds(_ text: String?) throws(HTTPError) -> Double? {
        guard let text, !text.isEmpty else { return nil }
        guard let seconds = Double(text), seconds == 0 || (0.1...86_400).contains(seconds) else {
            throw HTTPError(
                status: 400, code: "badParameter",
                message: "progress takes a number of seconds: 0 (never) or from 0.1 to 86400; got '\(text)'")
        }
        return seconds
    }
}
