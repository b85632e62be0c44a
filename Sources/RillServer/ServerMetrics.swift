import Foundation
import Rill
import RillLocks
import RillService
import Synchronization

/// The daemon's figures, as `GET /metrics` exposes them (Documentation/Operations.md).
///
/// What moves on every request or save is an atomic: counting a save takes no lock. Rejections
/// are counted by status and code behind a lock, taken only for a request that failed. Live
/// queries and the follower's lag are read from the store's follower when scraped.
package final class ServerMetrics: Sendable {
    /// Saves answered (with or without a commit).
    let saves = Atomic<UInt64>(0)
    /// How long each save answered took in the store, in nanoseconds.
    let saveDuration = MetricHistogram(
        bounds: [
            100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000, 25_000_000, 50_000_000,
            100_000_000, 250_000_000, 500_000_000, 1_000_000_000, 2_500_000_000, 10_000_000_000,
        ],
        scale: 1e-9)
    /// Commits written by the daemon's saves.
    let commits = Atomic<UInt64>(0)
    /// The changes (records written) of each commit.
    let commitRecords = MetricHistogram(bounds: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 5_000, 10_000, 100_000])
    /// Requests answered, of every kind (a subscription counts once, when it starts).
    let requests = Atomic<UInt64>(0)
    /// Event streams open.
    let subscribers = Atomic<Int>(0)
    /// Subscribers sent fresh results because their queue overflowed.
    let queueResets = Atomic<UInt64>(0)
    /// Subscriptions that resumed with fresh results (too far behind, before the horizon, or
    /// through relationships) instead of the commits they missed.
    let resumeResets = Atomic<UInt64>(0)
    /// Connections accepted on the Unix socket, and over TCP.
    let acceptedLocal = Atomic<UInt64>(0)
    let acceptedTCP = Atomic<UInt64>(0)
    /// Connections open now.
    let openConnections = Atomic<Int>(0)
    private let rejections = Lock<[Rejection: UInt64]>([:])

    /// A rejected request's kind: its status and the protocol's error code.
    struct Rejection: Hashable {
        var status: Int
        var reason: String
    }

    package init() {}

    // MARK: - Counting

    /// Counts a save that took `nanoseconds` and made a commit of `changes` changes (none: 0).
    func countSave(nanoseconds: UInt64, result: SaveResult) {
        saves.wrappingAdd(1, ordering: .relaxed)
        saveDuration.observe(nanoseconds)
        guard result.sequence != nil else { return }
        commits.wrappingAdd(1, ordering: .relaxed)
        commitRecords.observe(UInt64(result.changeCount))
    }

    /// Counts a request refused with `status` (400 and above) and the error code `reason`.
    func countRejection(status: Int, reason: String) {
        rejections.withLock { $0[Rejection(status: status, reason: reason), default: 0] += 1 }
    }

    // MARK: - Exposition

    /// The figures in Prometheus's text format, with `store`'s log head and follower.
    ///
    /// - Throws: ``RillError`` when the store's log cannot be read.
    func exposition(of store: Store) throws -> String {
        let follower = try store.liveFollowerStatus()
        var text = PrometheusText()
        text.counter("rill_requests_total", "Requests answered, of every endpoint.", requests.load(ordering: .relaxed))
        text.counter("rill_saves_total", "Saves answered by POST /v1/save, with or without a commit.", load(saves))
        text.histogram("rill_save_duration_seconds", "How long a save took in the store, in seconds.", saveDuration)
        text.counter("rill_commits_total", "Commits written by the daemon's saves.", load(commits))
        text.histogram(
            "rill_commit_records", "The records written by each commit of the daemon's saves.", commitRecords)
        text.counter(
            "rill_write_transactions_total",
            "Write transactions the daemon committed to the store file: flushes of the disk, each shared by the saves grouped into it.",
            store.writeTransactionsCommitted)
        text.gauge(
            "rill_log_head", "The sequence of the last commit in the log, by any process.",
            Double(follower.observableHead))
        text.gauge(
            "rill_live_queries", "Live queries the daemon's follower keeps (shared results count once).",
            Double(follower.liveQueries))
        text.gauge(
            "rill_subscribers", "Event streams open (GET /v1/subscribe).", Double(subscribers.load(ordering: .relaxed)))
        text.gauge(
            "rill_follower_lag_commits", "Commits in the log that the live-query follower has yet to apply.",
            Double(follower.lagCommits))
        text.gauge(
            "rill_follower_lag_milliseconds",
            "How long ago the oldest commit the follower has yet to apply was made, in milliseconds; 0 when caught up.",
            (follower.lagSeconds * 1000).rounded())
        text.counter(
            "rill_subscriber_resets_total", "Subscribers sent fresh results instead of the changes they missed.",
            [([("reason", "queue")], load(queueResets)), ([("reason", "resume")], load(resumeResets))])
        text.counter(
            "rill_connections_accepted_total", "Connections accepted, by listener.",
            [([("listener", "unix")], load(acceptedLocal)), ([("listener", "tcp")], load(acceptedTCP))])
        text.gauge("rill_connections_open", "Connections open now.", Double(openConnections.load(ordering: .relaxed)))
        let rejected = rejections.withLock { $0 }.sorted {
            ($0.key.status, $0.key.reason) < ($1.key.status, $1.key.reason)
        }
        text.counter(
            "rill_requests_rejected_total", "Requests and connections refused, by status and error code.",
            rejected.map { ([("status", String($0.key.status)), ("reason", $0.key.reason)], $0.value) })
        return text.text
    }

    private func load(_ counter: borrowing Atomic<UInt64>) -> UInt64 { counter.load(ordering: .relaxed) }
}
