#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value behind a pthread mutex, reached only through ``withLock(_:)``: the lock of every
/// shared state in Rill.
///
/// It stands where Synchronization's `Mutex` would. On Linux that one is built on futexes, which
/// ThreadSanitizer cannot see: every access under it is reported as a race, so that real races
/// would drown among them. TSan intercepts `pthread_mutex_lock`, and an uncontended pthread mutex
/// costs what the futex's compare-and-swap does plus a call (Documentation/Reliability.md,
/// "Threads", has the measurements). `withLock` is inlinable, so a caller in another module calls
/// pthread directly.
package final class Lock<Value>: @unchecked Sendable {
    // Sendable like `Mutex`: the value is reached only while the lock is held, and a pthread
    // mutex may be used from any thread. A pthread mutex must not move in memory, hence the
    // manual allocations; the value's too, so that reaching it needs no dynamic exclusivity
    // check (the lock is what makes the access exclusive).
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let value: UnsafeMutablePointer<Value>

    /// A lock holding `value`, held by nobody.
    @inlinable package init(_ value: Value) {
        self.value = .allocate(capacity: 1)
        self.value.initialize(to: value)
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` on the value, holding the lock; what it returns or throws comes back.
    @inlinable package func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
