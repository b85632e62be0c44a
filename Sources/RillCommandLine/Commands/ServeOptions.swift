import Foundation
import Rill
import RillHTTP
import RillJetStream
import RillServer

/// What `rill serve` is given: the store, the log level, and the server's configuration.
struct ServeOptions: CommandOptions {
    static let store = CommandDescription.Argument.store
    static let socket = ValueOption(
        "socket", valueName: "path", help: "The Unix socket (default: <store>/rill.sock, mode 0600)."
    )
    .completing(.file)
    static let listen = ValueOption(
        "listen", valueName: "host:port",
        help: "Also listen on TCP (':8080' is loopback); every request then needs the token. There is no "
            + "TLS: beyond loopback, put a TLS reverse proxy in front (Protocol.md)."
    ) { text in
        guard let address = SocketAddress.tcp(text) else {
            throw UsageError("--listen takes host:port, [v6]:port or :port; got '\(text)'")
        }
        return address
    }
    static let tokenFile = ValueOption(
        "token-file", valueName: "path", help: "The bearer token for TCP, read from this file (or set RILL_TOKEN)."
    )
    .completing(.file)
    static let allowOrigin = ValueOption(
        "allow-origin", valueName: "origins",
        help: "Browser origins allowed over TCP (CORS), comma-separated; none by default."
    ) { text in
        Set(text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
    }
    static let maxBody = ValueOption.wholeNumber(
        "max-body", valueName: "bytes", help: "The largest request body (default: 16 MiB).", in: 1...(1 << 30))
    static let queue = ValueOption.wholeNumber(
        "queue", valueName: "events",
        help: "Events a subscriber may fall behind by before it is reset (default: 1024).", in: 1...1_000_000)
    static let maxConnections = ValueOption.wholeNumber(
        "max-connections", valueName: "n",
        help: "Connections served at once on the Unix socket, and as many over TCP once authenticated; "
            + "more are answered 503 (default: 512).",
        in: 1...100_000)
    static let maxUnauthenticated = ValueOption.wholeNumber(
        "max-unauthenticated", valueName: "n",
        help: "TCP connections not yet authenticated, a budget of their own; past it the oldest is closed "
            + "after a second (default: 16).",
        in: 1...100_000)
    static let requestTimeout = ValueOption.seconds(
        "request-timeout", valueName: "seconds",
        help: "A request's head must arrive within this of its first byte, its body within as long again "
            + "or its size at 256 KiB/s (default: 10).")
    static let idleTimeout = ValueOption.seconds(
        "idle-timeout", valueName: "seconds",
        help: "Connections silent this long between requests are closed (default: 60; TCP connections "
            + "not yet authenticated: the request timeout).")
    static let keepAlive = ValueOption.seconds(
        "keep-alive", valueName: "seconds",
        help: "An event stream sends a comment after this long without events (default: 15).")
    static let progress = ValueOption.seconds(
        "progress", valueName: "seconds",
        help: "A subscription whose results stay as they are while the log moves on sends a progress event, "
            + "its resume id, after this long without events (default: 5; 0: never).",
        orZero: true)
    static let resumeLimit = ValueOption.wholeNumber(
        "resume-limit", valueName: "commits",
        help: "The most commits a subscription resumes across; further behind, a reset (default: 100000).")
    static let log = ValueOption(
        "log", valueName: "nats://host:port[,…]/stream",
        help: "Share the store's commit log with other nodes through this NATS JetStream stream (created when "
            + "missing, with a replica for each server named; ?replicas=n to choose). The store is created when "
            + "missing and filled from the stream; saves are acknowledged once the stream holds them."
    ) { text in
        do { return try JetStreamAddress(text) } catch let error as RillError {
            throw UsageError("--log: \(error.message)")
        }
    }
    static let logLevel = ValueOption(
        "log-level", valueName: "level", help: "debug, info (default), warning or error."
    ) { text in
        guard let level = Log.Level(name: text) else {
            throw UsageError("--log-level takes debug, info, warning or error; got '\(text)'")
        }
        return level
    }
    .completing(.choices(["debug", "info", "warning", "error"]))
    static let logFormat = ValueOption(
        "log-format", valueName: "format",
        help: "text (default) or json: one JSON object a line, with the request id and the client."
    ) { text in
        guard let format = Log.Format(name: text) else {
            throw UsageError("--log-format takes text or json; got '\(text)'")
        }
        return format
    }
    .completing(.choices(["text", "json"]))

    static let arguments = [store]
    static let options = [
        socket.option, listen.option, tokenFile.option, allowOrigin.option, maxBody.option, queue.option,
        maxConnections.option, maxUnauthenticated.option, requestTimeout.option, idleTimeout.option,
        keepAlive.option, progress.option, resumeLimit.option, log.option, logLevel.option, logFormat.option,
    ]

    /// The store directory.
    var store: String
    /// The replicated commit log the store follows, nil for the store's own log alone.
    var log: JetStreamAddress?
    /// The level to log at; nil for the default.
    var logLevel: RillServer.Log.Level?
    /// How log lines are written; nil for the default (text).
    var logFormat: RillServer.Log.Format?
    /// The server's configuration, with the bearer token when it listens on TCP.
    var server: ServerOptions

    /// Checks the values in the order `rill serve` always has; with `--listen`, that includes
    /// reading the token (from `--token-file`, else `RILL_TOKEN`), which a TCP listener needs.
    init(_ arguments: ParsedArguments) throws {
        store = arguments[Self.store]
        log = try arguments[Self.log]
        logLevel = try arguments[Self.logLevel]
        logFormat = try arguments[Self.logFormat]
        server = ServerOptions(
            socketPath: try arguments[Self.socket] ?? (store as NSString).appendingPathComponent("rill.sock"))
        if let address = try arguments[Self.listen] {
            server.tcp = address
            server.token = try ServeCommand.token(file: try arguments[Self.tokenFile])
            guard server.token != nil else {
                throw UsageError("--listen needs a bearer token: --token-file <path>, or RILL_TOKEN in the environment")
            }
        }
        if let origins = try arguments[Self.allowOrigin] { server.allowedOrigins = origins }
        if let bytes = try arguments[Self.maxBody] { server.limits.bodyBytes = bytes }
        if let events = try arguments[Self.queue] { server.subscriberQueue = events }
        if let commits = try arguments[Self.resumeLimit] { server.resumeLimit = UInt64(commits) }
        if let count = try arguments[Self.maxConnections] { server.maxConnections = count }
        if let count = try arguments[Self.maxUnauthenticated] { server.maxUnauthenticated = count }
        if let seconds = try arguments[Self.requestTimeout] { server.requestSeconds = seconds }
        if let seconds = try arguments[Self.idleTimeout] { server.idleSeconds = seconds }
        if let seconds = try arguments[Self.keepAlive] { server.keepAliveSeconds = seconds }
        if let seconds = try arguments[Self.progress] { server.progressSeconds = seconds }
    }
}
