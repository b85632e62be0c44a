extension ModelConfiguration {
    /// A log held outside the store, replicated over several machines, that the store's commits go
    /// to first and that every store sharing it applies in order: several nodes, one history.
    ///
    /// A module that speaks such a log provides its values; `RillJetStream` provides
    /// ``ModelConfiguration/ReplicatedLog`` values for NATS JetStream streams:
    ///
    /// ```swift
    /// import RillJetStream
    ///
    /// let configuration = ModelConfiguration(
    ///     url: URL(filePath: "/var/lib/myapp/library.rill"),
    ///     log: try .jetStream("nats://n1:4222,n2:4222,n3:4222/library"))
    /// ```
    ///
    /// Two values are equal when they name the same log (the same servers, stream and settings).
    /// See <doc:RunningOnSeveralMachines> for what a save means then, and what each node sees.
    public struct ReplicatedLog: Sendable, Hashable, CustomStringConvertible {
        /// The log, as its module names it (for example `nats://n1:4222,n2:4222/library`).
        public let name: String
        /// Connects to the log; called once for each store opened with it.
        package let open: @Sendable () throws -> any LogReplica

        /// A log named `name` that `open` connects to.
        package init(name: String, open: @escaping @Sendable () throws -> any LogReplica) {
            self.name = name
            self.open = open
        }

        public var description: String { name }

        public static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name }

        public func hash(into hasher: inout Hasher) { hasher.combine(name) }
    }
}
