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
package enum MemoryTrim {
    private static let scheduled = Atomic<Bool>(false)

    /// glibc's `malloc_trim`, which Swift's Glibc module does not export; nil elsewhere.
    private static let trim: (@convention(c) (Int) -> Int32)? = {
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    /// glibc's `mallopt`, which Swift's Glibc module does not export either; nil elsewhere.
    private static let mallopt: (@convention(c) (Int32, Int32) -> Int32)? = {
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "mallopt") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
    }()

    /// The size from which an allocation gets pages of its own (`mmap`), returned to the system
    /// as soon as it is freed.
    package static let mappedAllocationBytes: Int32 = 1 << 20

    /// Makes every allocation of ``mappedAllocationBytes`` or more one of its own pages, for the
    /// life of the process.
    ///
    /// glibc starts at 128 KiB but raises the threshold to the size of each such block freed, up
    /// to 32 MiB: after the first 16 MiB request body, the next ones come from the heap of the
    /// arena of the connection's thread, and stay there once freed. With a thread per connection
    /// and up to 16 arenas, the resident set then grew by 32 MiB for every large request sent
    /// from a new thread (the `hostile` suite measured 369 MiB after ten rounds of them). A fixed
    /// threshold (`M_MMAP_THRESHOLD`) turns the dynamic one off; bodies, large results and their
    /// copies are unmapped when freed. Smaller blocks are the arenas' as before.
    package static func mapLargeAllocations() {
        // M_MMAP_THRESHOLD in <malloc.h>.
        _ = mallopt?(-3, mappedAllocationBytes)
    }

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
