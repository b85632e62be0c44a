#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A pthread read-write lock (the default, reader-preferring kind: one thread may nest shared holds).
///
/// One lock for the storage layer's resize gate and the log follower's publication: both take it on every
/// transaction or read, so its members are inlinable and a caller in another module calls pthread directly
/// (public for that, as ``Lock`` is: a `package` declaration's inlinable body is not inlined across modules).
public final class ReadWriteLock: @unchecked Sendable {
    // A pthread lock must not move in memory, hence the manual allocation. Sendable because a
    // pthread read-write lock is itself safe to use from any thread.
    @usableFromInline let lock: UnsafeMutablePointer<pthread_rwlock_t>

    /// A new lock, held by nobody.
    @inlinable public init() {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_rwlock_t())
        precondition(pthread_rwlock_init(lock, nil) == 0, "pthread_rwlock_init failed")
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// Takes a shared hold, waiting while the lock is held exclusively; pair it with `unlockShared()`.
    @inlinable public func lockShared() {
        precondition(pthread_rwlock_rdlock(lock) == 0, "pthread_rwlock_rdlock failed")
    }

    /// Releases a shared hold taken with `lockShared()`.
    @inlinable public func unlockShared() { pthread_rwlock_unlock(lock) }

    /// Runs `body` holding the lock shared.
    @inlinable public func withShared<R>(_ body: () throws -> R) rethrows -> R {
        lockShared()
        defer { unlockShared() }
        return try body()
    }

    /// Runs `body` holding the lock exclusively.
    @inlinable public func withExclusive<R>(_ body: () throws -> R) rethrows -> R {
        precondition(pthread_rwlock_wrlock(lock) == 0, "pthread_rwlock_wrlock failed")
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}
