import Foundation
import Rill
import RillHTTP
import RillJetStream
import RillServer

/// `rill serve`: the daemon.
struct ServeCommand: Command {
    let description = CommandDescription(
        name: "serve",
        abstract: "Serve a store over HTTP: saves, queries and live subscriptions (Server-Sent Events).",
        arguments: ServeOptions.arguments,
        options: ServeOptions.options,
        discussion: """
            Runs in the foreground and logs to standard error, one line per event. SIGTERM or
            SIGINT: stop accepting, finish the requests in flight, end the streams, exit 0.
            Endpoints and event shapes: Documentation/Protocol.md. For example:

              curl --unix-socket store/rill.sock 'http://rill/v1/query?q=Book%20limit%205'
              curl -N --unix-socket store/rill.sock 'http://rill/v1/subscribe?q=Book'

            The Unix socket serves the daemon's user and root only. TCP (--listen) is plain
            HTTP with a bearer token: to serve other machines, keep it on 127.0.0.1 behind a
            reverse proxy that terminates TLS (Protocol.md, "TLS through a reverse proxy").
            GET /metrics gives the daemon's figures in Prometheus's text format. Under
            systemd (Type=notify, NOTIFY_SOCKET set) it sends READY=1 once it serves and
            STOPPING=1 when it stops (Documentation/Operations.md).

            With --log, the store is one node of several sharing one commit log in a NATS
            JetStream stream: each save is committed there first, every node's commits are
            applied here in order, and the daemon's subscribers see them all. While the stream
            does not answer, queries answer from the store and saves fail (503).
            """,
        examples: [
            "rill serve ./books",
            "rill serve ./books --socket /tmp/books.sock --log-level warning --max-connections 64",
            "rill serve ./books --log nats://n1:4222,n2:4222,n3:4222/books",
        ]
    )

    func run(_ options: ServeOptions, output: inout Output) throws -> Int32 {
        // Before the store and the sockets are opened: a closed standard error would otherwise be
        // the next one (the token file, read while decoding the options, is closed again).
        StandardDescriptors.reserve()
        DescriptorLimit.raise()
        MemoryTrim.mapLargeAllocations()
        // Before the socket exists: a signal sent as soon as a client can see it is not lost.
        let signals = ShutdownSignals()
        let path = options.store
        if let level = options.logLevel { Log.setLevel(level) }
        if let format = options.logFormat { Log.setFormat(format) }

        let replica = try options.log.map {
            try JetStreamLog(
                servers: $0.servers, stream: $0.stream, replicas: $0.replicas, timeout: $0.timeout, connects: false)
        }
        // A node of a replicated log may start from nothing: the stream fills its new store.
        let store = try openStore(path, creating: replica != nil, replica: replica)
        let follower = replica.map { _ in ReplicaFollower(store) }
        defer { follower?.stop() }
        if let replica {
            do { try store.catchUpWithReplica() } catch let error as RillError
                where error.code == .replicationUnavailable
            {
                Log.warning(
                    "\(replica.name) does not answer (\(error.message)): serving the store as it is until it does")
            }
        }
        let server: Server
        do {
            server = try Server(store: store, options: options.server)
        } catch let error as SocketError {
            Output.error("cannot listen: \(error)")
            return ExitStatus.failure
        }
        let head = try store.head()
        Log.info("serving \(path) (last commit \(head)\(replica.map { ", following \($0.name)" } ?? ""))")
        server.run(stoppingOn: signals)
        return ExitStatus.success
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
