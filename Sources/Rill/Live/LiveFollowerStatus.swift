import Foundation
import Synchronization

/// Where this process's follower of a store's log stands, for a daemon's metrics: how many live
/// queries it follows and how far behind the log it is.
package struct LiveFollowerStatus: Sendable, Equatable {
    /// The live queries followed (queries that share their results count once).
    package var liveQueries: Int
    /// The last commit the follower applied (its observers were told of everything up to it).
    package var appliedThrough: UInt64
    /// The last commit an observer may be told of (on disk), as the log says now.
    package var observableHead: UInt64
    /// How long ago the oldest commit not yet applied was made, in seconds; 0 when caught up.
    package var lagSeconds: Double

    /// The commits the follower has yet to apply.
    package var lagCommits: UInt64 { observableHead > appliedThrough ? observableHead - appliedThrough : 0 }
}

extension Store {
    /// Where this process's follower of the store's log stands; with no follower running (no
    /// live query in this process), none is behind: the status is that of a caught-up one.
    ///
    /// Reads the follower's figures without waiting for its thread, and the log in a read
    /// transaction of its own.
    ///
    /// - Throws: ``RillError`` when the log cannot be read.
    package func liveFollowerStatus(now: Date = Date()) throws -> LiveFollowerStatus {
        let follower = LogFollowers.running(for: fileID)
        return try read { txn in
            let head = try observableHead(in: txn)
            let applied = follower?.appliedThrough.load(ordering: .relaxed) ?? head
            var status = LiveFollowerStatus(
                liveQueries: follower?.followedCount.load(ordering: .relaxed) ?? 0, appliedThrough: applied,
                observableHead: head, lagSeconds: 0)
            if applied < head, let next = try log.entries(after: applied, limit: 1, in: txn).first {
                status.lagSeconds = max(0, now.timeIntervalSince(next.timestamp))
            }
            return status
        }
    }
}
