import Foundation
import Rill
import RillHTTP
import RillServer

/// `rill serve`: the daemon.
struct ServeCommand: Command {
    let description = CommandDescription(
        name: "serve",
        abstract: "Serve a store over HTTP: saves, queries and live subscriptions (Server-Sent Events).",
        arguments: [.init(name: "store", help: "The store directory.")],
        options: [
            .init(name: "socket", valueName: "path", help: "The Unix socket (default: <store>/rill.sock, mode 0600)."),
            .init(
                name: "listen", valueName: "host:port",
                help: "Also listen on TCP (':8080' is loopback); every request then needs the token."),
            .init(
                name: "token-file", valueName: "path",
                help: "The bearer token for TCP, read from this file (or set RILL_TOKEN)."),
            .init(
                name: "allow-origin", valueName: "origins",
                help: "Browser origins allowed over TCP (CORS), comma-separated; none by default."),
            .init(name: "max-body", valueName: "bytes", help: "The largest request body (default: 16 MiB)."),
            .init(
                name: "queue", valueName: "events",
                help: "Events a subscriber may fall behind by before it is reset (default: 1024)."),
            .init(
                name: "max-connections", valueName: "n",
                help:
                    "Connections served at once on the Unix socket, and as many over TCP once authenticated; "
                    + "more are answered 503 (default: 512)."),
            .init(
                name: "max-unauthenticated", valueName: "n",
                help:
                    "TCP connections not yet authenticated, a budget of their own; past it the oldest is closed "
                    + "after a second (default: 16)."),
            .init(
                name: "request-timeout", valueName: "seconds",
                help:
                    "A request's head must arrive within this of its first byte, its body within as long again "
                    + "or its size at 256 KiB/s (default: 10)."),
            .init(
                name: "idle-timeout", valueName: "seconds",
                help:
                    "Connections silent this long between requests are closed (default: 60; TCP connections "
                    + "not yet authenticated: the request timeout)."),
            .init(
                name: "keep-alive", valueName: "seconds",
                help: "An event stream sends a comment after this long without events (default: 15)."),
            .init(
                name: "resume-limit", valueName: "commits",
                help: "The most commits a subscription resumes across; further behind, a reset (default: 100000)."),
            .init(name: "log-level", valueName: "level", help: "debug, info (default), warning or error."),
        ],
        discussion: """
            Runs in the foreground and logs to standard error, one line per event. SIGTERM or
            SIGINT: stop accepting, finish the requests in flight, end the streams, exit 0.
            Endpoints and event shapes: Documentation/Protocol.md. For example:

              curl --unix-socket store/rill.sock 'http://rill/v1/query?q=Book%20limit%205'
              curl -N --unix-socket store/rill.sock 'http://rill/v1/subscribe?q=Book'
            """
    )

    func run(_ arguments: ParsedArguments, output: inout Output) throws -> Int32 {
        // Before any file is opened: a closed standard error would otherwise be the next one.
        StandardDescriptors.reserve()
        DescriptorLimit.raise()
        let path = arguments.positionals[0]
        if let level = arguments.value("log-level") {
            guard let parsed = Log.Level(name: level) else {
                throw UsageError("--log-level takes debug, info, warning or error; got '\(level)'")
            }
            Log.setLevel(parsed)
        }
        var options = ServerOptions(
            socketPath: arguments.value("socket") ?? (path as NSString).appendingPathComponent("rill.sock"))
        if let listen = arguments.value("listen") {
            guard let address = SocketAddress.tcp(listen) else {
                throw UsageError("--listen takes host:port, [v6]:port or :port; got '\(listen)'")
            }
            options.tcp = address
            options.token = try Self.token(file: arguments.value("token-file"))
            guard options.token != nil else {
                throw UsageError("--listen needs a bearer token: --token-file <path>, or RILL_TOKEN in the environment")
            }
        }
        if let origins = arguments.value("allow-origin") {
            options.allowedOrigins = Set(origins.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        }
        if let bytes = try arguments.integer("max-body", in: 1...(1 << 30)) { options.limits.bodyBytes = bytes }
        if let events = try arguments.integer("queue", in: 1...1_000_000) { options.subscriberQueue = events }
        if let commits = try arguments.integer("resume-limit", in: 0...Int.max) {
            options.resumeLimit = UInt64(commits)
        }
        if let count = try arguments.integer("max-connections", in: 1...100_000) { options.maxConnections = count }
        if let count = try arguments.integer("max-unauthenticated", in: 1...100_000) {
            options.maxUnauthenticated = count
        }
        if let seconds = try Self.seconds(arguments, "request-timeout") { options.requestSeconds = seconds }
        if let seconds = try Self.seconds(arguments, "idle-timeout") { options.idleSeconds = seconds }
        if let seconds = try Self.seconds(arguments, "keep-alive") { options.keepAliveSeconds = seconds }

        let store = try openStore(path)
        let server: Server
        do {
            server = try Server(store: store, options: options)
        } catch let error as SocketError {
            Output.error("cannot listen: \(error)")
            return ExitStatus.failure
        }
        let head = try store.head()
        Log.info("serving \(path) (last commit \(head))")
        server.run()
        return ExitStatus.success
    }

    /// The option's value as a positive number of seconds (fractions allowed), or nil when absent.
    static func seconds(_ arguments: ParsedArguments, _ option: String) throws -> Double? {
        guard let text = arguments.value(option) else { return nil }
        guard let seconds = Double(text), seconds > 0, seconds <= 86_400 else {
            throw UsageError("--\(option) takes a number of seconds above 0, at most 86400; got '\(text)'")
        }
        return seconds
    }

    /// The token from `file`, else from `RILL_TOKEN`; never from the command line, where other
    /// users could read it.
    static func token(file: String?) throws -> String? {
        if let file {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw RillError(.storage, "cannot read the token file \(file)")
            }
            let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !token.isEmpty else { throw RillError(.storage, "the token file \(file) is empty") }
            return token
        }
        if let token = ProcessInfo.processInfo.environment["RILL_TOKEN"], !token.isEmpty { return token }
        return nil
    }
}
