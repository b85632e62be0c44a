import Synchronization

/// Whether an observer is cancelled, shared by the changes queued for it.
final class CancellationFlag: Sendable {
    private let cancelled = Atomic(false)
    func cancel() { cancelled.store(true, ordering: .releasing) }
    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }
}
