/// A log held elsewhere, which a store's commits go to before they are applied, and which every
/// node sharing it applies in order: the replicated log (see "A replicated log behind the same
/// interface" in `Documentation/Architecture.md`).
///
/// Its messages are the log's entries, in their encoding, numbered by the replica from 1 without
/// gaps: a commit's sequence is its number there, on every node.
package protocol LogReplica: Sendable {
    /// The replica, for messages (`nats://host:4222/books`).
    var name: String { get }

    /// The number of the replica's last entry, 0 when it holds none.
    ///
    /// - Throws: ``RillError/Code/replicationUnavailable`` when the replica does not answer.
    func last() throws -> UInt64

    /// Appends `entry` only if the replica's last entry is `sequence` (0: it holds none), and only
    /// once for `id`.
    ///
    /// - Returns: the entry's number, `sequence + 1` (or the number given the first append of
    ///   `id`); nil when another entry came after `sequence` first: nothing was appended.
    /// - Throws: ``RillError/Code/replicationUnavailable`` when no answer came: the entry may have
    ///   been appended (appending it again with the same `id` tells).
    func append(_ entry: [UInt8], after sequence: UInt64, id: String) throws -> UInt64?

    /// Entry `sequence`, nil when the replica does not hold it.
    func entry(_ sequence: UInt64) throws -> [UInt8]?

    /// A feed of the entries from `sequence` on, in order, each once.
    func follow(from sequence: UInt64) throws -> any LogReplicaFeed
}

/// The entries of a ``LogReplica`` in order, read by one thread.
package protocol LogReplicaFeed: AnyObject, Sendable {
    /// The next entry, waiting up to `timeout` seconds; nil when none came.
    func next(timeout: Double) throws -> (sequence: UInt64, entry: [UInt8])?
}
