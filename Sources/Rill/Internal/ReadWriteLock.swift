#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A pthread read-write lock (the default, reader-preferring kind: one thread may nest shared holds),
/// for the library's own state (the storage layer keeps its own for its resize gate).
final class ReadWriteLock: @unchecked Sendable {
    // A pthread lock must not move in memory, hence the manual allocation. Sendable because a
    // pthread read-write lock is itself safe to use from any thread.
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    init() {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_rwlock_t())
        precondition(pthread_rwlock_init(lock, nil) == 0, "pthread_rwlock_init failed")
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    func lockShared() { precondition(pthread_rwlock_rdlock(lock) == 0, "pthread_rwlock_rdlock failed") }
    func unlockShared() { pthread_rwlock_unlock(lock) }

    func withShared<R>(_ body: () throws -> R) rethrows -> R {
        lockShared()
        defer { unlockShared() }
        return try body()
    }

    func withExclusive<R>(_ body: () throws -> R) rethrows -> R {
        precondition(pthread_rwlock_wrlock(lock) == 0, "pthread_rwlock_wrlock failed")
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}
