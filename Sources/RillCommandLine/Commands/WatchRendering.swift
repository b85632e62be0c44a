import Rill

/// How `rill watch` prints results and changes.
protocol WatchRendering: Sendable {
    func results(_ rows: [QueryRow], sequence: UInt64) -> String
    /// Called in commit order, on one thread at a time.
    func change(_ change: ResultsChange<QueryRow>) -> String
}
