#if RILL_THREAD_SANITIZER
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif
#else
    import Synchronization
#endif

/// A value behind a lock, reached only through ``withLock(_:)``: the lock of every shared state
/// in Rill.
///
/// It is Synchronization's `Mutex`, except in a build for ThreadSanitizer (`make tsan`, which
/// passes `-DRILL_THREAD_SANITIZER`), where it is a pthread mutex. On Linux `Mutex` is built on
/// futexes, which ThreadSanitizer cannot see: every access under it would be reported as a race,
/// and real races would drown among them; TSan intercepts `pthread_mutex_lock`. Outside that
/// build the futex lock stays, because it is cheaper when two threads meet on it (the follower
/// and the threads it hands work to do): Documentation/Reliability.md, "Threads", has the
/// measurements. Both variants have the same semantics, so what TSan checks is the code that
/// runs.
///
/// Public although the module is no product: Swift 6.3 neither inlines nor specializes the
/// `@inlinable` body of a `package` declaration in another module, so every `withLock` of Rill
/// went through the generic entry point, looking up its type metadata on each call (`perf` put
/// those lookups at about 7% of a 1-row indexed fetch, which takes several locks).
public final class Lock<Value>: @unchecked Sendable {
    #if RILL_THREAD_SANITIZER
        // A pthread mutex must not move in memory, hence the manual allocations; the value's
        // too, so that reaching it needs no dynamic exclusivity check (the lock is what makes
        // the access exclusive).
        @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
        @usableFromInline let value: UnsafeMutablePointer<Value>

        /// A lock holding `value`, held by nobody.
        @inlinable public init(_ value: Value) {
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
        @inlinable public func withLock<Result, Failure: Error>(
            _ body: (inout Value) throws(Failure) -> Result
        ) throws(Failure) -> Result {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    #else
        @usableFromInline let mutex: Mutex<UnsafeValue>

        /// The value, unchecked for sendability: `Lock` is `@unchecked Sendable` on the same
        /// terms as `Mutex` (the value is reached only while the lock is held).
        @usableFromInline struct UnsafeValue: @unchecked Sendable {
            @usableFromInline var value: Value
            @inlinable init(_ value: Value) { self.value = value }
        }

        /// A lock holding `value`, held by nobody.
        @inlinable public init(_ value: Value) {
            mutex = Mutex(UnsafeValue(value))
        }

        /// Runs `body` on the value, holding the lock; what it returns or throws comes back.
        @inlinable public func withLock<Result, Failure: Error>(
            _ body: (inout Value) throws(Failure) -> Result
        ) throws(Failure) -> Result {
            try mutex.withLock { (box: inout UnsafeValue) throws(Failure) -> UnsafeResult<Result> in
                UnsafeResult(try body(&box.value))
            }.result
        }

        /// A result handed out of the lock, unchecked for sendability as the value is.
        @usableFromInline struct UnsafeResult<R>: @unchecked Sendable {
            @usableFromInline var result: R
            @inlinable init(_ result: R) { self.result = result }
        }
    #endif
}
