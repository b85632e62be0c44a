import Rill

extension ModelConfiguration.ReplicatedLog {
    /// The log in the NATS JetStream stream `stream` of the cluster at `servers`.
    ///
    /// The stream is created when it does not exist, with `replicas` copies of each commit (a
    /// save is acknowledged once a majority of them hold it); an existing stream keeps its
    /// operator's settings. The log's commits go to the subject `rill.<stream>.commits`, the
    /// stream's only subject.
    ///
    /// - Parameters:
    ///   - servers: some or all of the cluster's servers, `host:port` or `nats://host:port`.
    ///   - stream: the stream's name: letters, digits, `-` and `_`.
    ///   - replicas: copies of each commit, 1 to 5, when the stream is created.
    ///   - timeout: how long a save waits for the log's acknowledgement, in seconds.
    /// - Throws: ``RillError/Code/invalidConfiguration`` naming what is wrong with the values.
    public static func jetStream(
        servers: [String], stream: String, replicas: Int = 3, timeout: Double = 5
    ) throws -> Self {
        let address = try JetStreamAddress(servers: servers, stream: stream, replicas: replicas, timeout: timeout)
        return Self(name: address.description) {
            try JetStreamLog(
                servers: address.servers, stream: address.stream, replicas: address.replicas,
                timeout: address.timeout, connects: false)
        }
    }

    /// The log named by `url`: `nats://host:port[,host:port…]/stream`, with optional
    /// `?replicas=n` (default: one copy for each server named, at most 5) and `&timeout=seconds`
    /// (default: 5).
    ///
    /// For example `nats://n1:4222,n2:4222,n3:4222/library` is the stream `library`, created with
    /// three replicas when it does not exist.
    ///
    /// - Throws: ``RillError/Code/invalidConfiguration`` naming what is wrong with `url`.
    public static func jetStream(_ url: String) throws -> Self {
        let address = try JetStreamAddress(url)
        return try jetStream(
            servers: address.servers, stream: address.stream, replicas: address.replicas, timeout: address.timeout)
    }
}
