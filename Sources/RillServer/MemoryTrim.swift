import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Hands the heap memory that the process freed back to the system, soon after a subscription
/// ends.
///
/// A live query holds its rows, megabytes for a large one. Released, they go back to glibc's
/// malloc, which keeps them in the arena of the thread that freed them rather than returning the
/// pages, so the daemon's resident set would stay at its highest. `malloc_trim(0)` returns the
/// free pages of every arena. It is called at most once a second, a second after the subscription
/// that asked: a burst of subscribers leaving costs one trim, and the follower (which lets go of
/// the query on its thread) has dropped the rows by then.
enum MemoryTrim {
    private static let scheduled = Atomic<Bool>(false)

    /// glibc's `malloc_trim`, which Swift's Glibc module does not export; nil elsewhere.
    private static let trim: (@convention(c) (Int) -> Int32)? = {
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    /// Trims a second from now, unless a trim is already due.
    static func soon() {
        guard trim != nil,
            scheduled.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
        else { return }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + 1) {
            // Cleared first: memory freed while this trim runs asks for the next one.
            scheduled.store(false, ordering: .relaxed)
            _ = trim?(0)
        }
    }
}
