import RillLocks
import Synchronization

/// The grouped writes waiting for an environment's writer thread, oldest first, and how the
/// writer takes them: at most `maxGroupSize` at a time, after waiting briefly for stragglers, and
/// then those queued while the group's transaction is being written.
///
/// `@unchecked Sendable`: the queue is behind its lock; `lastSize` is only touched by the writer
/// thread (`take` and `finished` run there).
final class GroupCommitQueue: @unchecked Sendable {
    /// The most writes one group commit takes: a bound on its transaction's dirty pages, and on
    /// how long the first write of a group waits for the last.
    static let maxGroupSize = 128

    private let writes = Lock<[GroupedWrite]>([])
    /// The size of the last group.
    private var lastSize = 0
    /// How long the last group took: read by the writer, and by the threads whose writes wait
    /// for the next group.
    private let lastNanoseconds = Atomic<UInt64>(0)

    /// How long the last group took, in nanoseconds: about what a write queued now waits for,
    /// and what decides whether its caller spins for the result (see `WriterThread`).
    var lastGroupNanoseconds: UInt64 { lastNanoseconds.load(ordering: .relaxed) }

    /// Queues `write` behind the others.
    func append(_ write: GroupedWrite) {
        writes.withLock { $0.append(write) }
    }

    /// Puts `rest` back at the front of the queue, in its order (the writes after one that
    /// failed in a group).
    func putBack(_ rest: ArraySlice<GroupedWrite>) {
        guard !rest.isEmpty else { return }
        writes.withLock { $0.insert(contentsOf: rest, at: 0) }
    }

    /// The next group: the writes at the front of the queue, at most `maxGroupSize`, once the
    /// stragglers had their moment.
    func take() -> [GroupedWrite] {
        gatherStragglers()
        return writes.withLock { queue in
            let taken = Array(queue.prefix(Self.maxGroupSize))
            queue.removeFirst(taken.count)
            return taken
        }
    }

    /// The writes queued now, at most `limit`, without waiting for stragglers: those that came
    /// while a group's transaction was being written, for it to take in too.
    func takeQueued(limit: Int) -> [GroupedWrite] {
        guard limit > 0 else { return [] }
        return writes.withLock { queue in
            guard !queue.isEmpty else { return [] }
            let taken = Array(queue.prefix(limit))
            queue.removeFirst(taken.count)
            return taken
        }
    }

    /// Records that a group that began with `size` writes took `nanoseconds`.
    func finished(size: Int, nanoseconds: UInt64) {
        lastSize = size
        lastNanoseconds.store(nanoseconds, ordering: .relaxed)
    }

    /// Waits briefly for the writers of the last group to queue their next writes, when fewer are
    /// queued now.
    ///
    /// The writers of a group learn together that their writes are durable, and each needs a
    /// moment to make its next one. Starting the next group at once with the first to come back
    /// leaves the others to wait for that group's flush, and groups then alternate between a few
    /// writes and many. So the writer waits for as many writes as the last group had, for at most
    /// a quarter of the time that group took (so never long where commits are quick, as without
    /// flushes) and 200 µs. Yielding while it waits, it leaves the core to those writers.
    private func gatherStragglers() {
        let expected = lastSize
        guard expected > 1 else { return }
        let took = lastGroupNanoseconds
        _ = WriterThread.spin(until: { writes.withLock { $0.count } >= expected }, for: min(took / 4, 200_000))
    }
}
