import Rill

/// Where a replicated log lives in NATS JetStream: the servers, the stream, and the settings a
/// store uses with it. Written and read as `nats://host:port[,host:port…]/stream?replicas=n&timeout=s`.
package struct JetStreamAddress: Sendable, Hashable, CustomStringConvertible {
    /// The servers, as `nats://host:port` URLs.
    package var servers: [String]
    package var stream: String
    /// Copies of each commit, when the stream is created.
    package var replicas: Int
    /// How long a request waits for its answer, in seconds.
    package var timeout: Double

    package static let defaultPort = 4222
    package static let defaultTimeout = 5.0

    /// Checks the values: servers as `host[:port]` or `nats://host[:port]`, a stream name JetStream
    /// takes, replicas 1 to 5, a positive timeout.
    package init(servers: [String], stream: String, replicas: Int, timeout: Double) throws {
        guard !servers.isEmpty else { throw Self.invalid("a JetStream log needs at least one server") }
        self.servers = try servers.map(Self.serverURL)
        guard !stream.isEmpty, stream.utf8.count <= 255,
            stream.unicodeScalars.allSatisfy({
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0)
                        || $0 == "-" || $0 == "_")
            })
        else {
            throw Self.invalid("the stream name '\(stream)' is not letters, digits, '-' and '_' (at most 255)")
        }
        self.stream = stream
        guard (1...5).contains(replicas) else {
            throw Self.invalid("a JetStream stream has 1 to 5 replicas, not \(replicas)")
        }
        self.replicas = replicas
        guard timeout > 0, timeout.isFinite else { throw Self.invalid("the timeout must be positive, not \(timeout)") }
        self.timeout = timeout
    }

    /// Reads `nats://host:port[,host:port…]/stream[?replicas=n][&timeout=s]`.
    package init(_ url: String) throws {
        guard url.hasPrefix("nats://") else {
            throw Self.invalid("a JetStream log is nats://host:port[,host:port…]/stream; '\(url)' is not a nats:// URL")
        }
        var rest = Substring(url.dropFirst("nats://".count))
        var parameters: [String: String] = [:]
        if let question = rest.firstIndex(of: "?") {
            for pair in rest[rest.index(after: question)...].split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, ["replicas", "timeout"].contains(String(parts[0])) else {
                    throw Self.invalid("'\(pair)' in '\(url)' is not replicas=<n> or timeout=<seconds>")
                }
                parameters[String(parts[0])] = String(parts[1])
            }
            rest = rest[..<question]
        }
        guard let slash = rest.firstIndex(of: "/") else {
            throw Self.invalid("'\(url)' names no stream: nats://host:port[,host:port…]/stream")
        }
        let hosts = rest[..<slash].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard !hosts.contains(where: \.isEmpty) else { throw Self.invalid("'\(url)' has an empty server") }
        let stream = String(rest[rest.index(after: slash)...])
        var replicas = min(hosts.count, 5)
        if let text = parameters["replicas"] {
            guard let value = Int(text) else { throw Self.invalid("replicas=\(text) in '\(url)' is not a number") }
            replicas = value
        }
        var timeout = Self.defaultTimeout
        if let text = parameters["timeout"] {
            guard let value = Double(text) else { throw Self.invalid("timeout=\(text) in '\(url)' is not a number") }
            timeout = value
        }
        try self.init(servers: hosts, stream: stream, replicas: replicas, timeout: timeout)
    }

    /// The address as a URL: `nats://host:port,…/stream?replicas=n&timeout=s` (the settings only
    /// when not their defaults for these servers).
    package var description: String {
        let hosts = servers.map { $0.dropFirst("nats://".count) }.joined(separator: ",")
        var parameters: [String] = []
        if replicas != min(servers.count, 5) { parameters.append("replicas=\(replicas)") }
        if timeout != Self.defaultTimeout { parameters.append("timeout=\(timeout)") }
        return "nats://\(hosts)/\(stream)" + (parameters.isEmpty ? "" : "?" + parameters.joined(separator: "&"))
    }

    /// `nats://host:port` for `host`, `host:port`, `[v6]:port` or `nats://…`.
    private static func serverURL(_ server: String) throws -> String {
        let bare = server.hasPrefix("nats://") ? String(server.dropFirst("nats://".count)) : server
        let host: Substring
        let port: Substring?
        if bare.hasPrefix("[") {
            guard let close = bare.firstIndex(of: "]") else {
                throw invalid("the server '\(server)' has no closing ']'")
            }
            host = bare[...close]
            let after = bare[bare.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else {
                throw invalid("the server '\(server)' is not host:port")
            }
            port = after.isEmpty ? nil : after.dropFirst()
        } else {
            let parts = bare.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = parts[0]
            port = parts.count == 2 ? parts[1] : nil
        }
        guard !host.isEmpty, !host.contains(where: { $0 == "/" || $0 == "@" || $0 == " " }) else {
            throw invalid("the server '\(server)' is not host:port")
        }
        var number = defaultPort
        if let port {
            guard let value = Int(port), (1...65535).contains(value) else {
                throw invalid("the server '\(server)' has no port 1 to 65535")
            }
            number = value
        }
        return "nats://\(host):\(number)"
    }

    private static func invalid(_ message: String) -> RillError { RillError(.invalidConfiguration, message) }
}
