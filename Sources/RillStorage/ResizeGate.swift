#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Keeps `mdb_env_set_mapsize` away from live transactions.
///
/// LMDB allows changing the map size only while the process has no transaction open, and does not
/// check it. Every transaction holds the gate shared for its whole life; growing the map (after
/// `MDB_MAP_FULL`) or adopting a size grown by another process (after `MDB_MAP_RESIZED`) holds it
/// exclusively. The default reader-preferring read-write lock lets one thread nest shared holds.
final class ResizeGate: @unchecked Sendable {
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

    func withExclusive<R>(_ body: () throws -> R) rethrows -> R {
        precondition(pthread_rwlock_wrlock(lock) == 0, "pthread_rwlock_wrlock failed")
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}
