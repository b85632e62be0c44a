import RillLocks

/// A registration of an observer of a live query; the observer hears nothing more once it is
/// cancelled, by ``cancel()`` or when the observation is released.
///
/// Keep it for as long as the observer should be called:
///
/// ```swift
/// let observation = books.observe(on: .main) { change in print(change) }
/// // …
/// observation.cancel()
/// ```
///
/// A change already on its way to the observer's queue when the observation is cancelled is
/// dropped there, unread.
public final class LiveObservation: Sendable {
    let flag = CancellationFlag()
    private let onCancel: Lock<(@Sendable () -> Void)?>

    init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = Lock(onCancel)
    }

    /// Stops the observer. The live query releases it (and what its closure captured) at once,
    /// or, for a change already queued for it, once that change is dropped.
    public func cancel() {
        flag.cancel()
        let action = onCancel.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
    }

    /// True once the observation is cancelled.
    public var isCancelled: Bool { flag.isCancelled }

    deinit { cancel() }
}
