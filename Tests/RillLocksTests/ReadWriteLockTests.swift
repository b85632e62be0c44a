import Dispatch
import RillLocks
import Synchronization
import Testing

/// The lock on its own: shared holds overlap and nest, an exclusive hold excludes them, values and errors
/// pass through.
@Suite struct ReadWriteLockTests {
    struct Failure: Error {}

    @Test func sharedHoldsNestAndPassValuesAndErrorsThrough() throws {
        let lock = ReadWriteLock()
        #expect(lock.withShared { lock.withShared { 7 } } == 7)
        #expect(throws: Failure.self) { try lock.withExclusive { throw Failure() } }
        // A hold released by a throw leaves the lock free.
        #expect(lock.withExclusive { "free" } == "free")
    }

    @Test func anExclusiveHoldExcludesEveryOther() {
        let lock = ReadWriteLock()
        let inside = Atomic<Int>(0)
        let most = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            for _ in 0..<2_000 {
                if index.isMultiple(of: 2) {
                    lock.withExclusive {
                        let now = inside.add(1000, ordering: .relaxed).newValue
                        most.max(now, ordering: .relaxed)
                        inside.subtract(1000, ordering: .relaxed)
                    }
                } else {
                    lock.lockShared()
                    let now = inside.add(1, ordering: .relaxed).newValue
                    most.max(now, ordering: .relaxed)
                    inside.subtract(1, ordering: .relaxed)
                    lock.unlockShared()
                }
            }
        }
        // An exclusive holder (1000) was never inside with anyone else; shared holders only with each other.
        #expect(most.load(ordering: .relaxed) <= 1000)
        #expect(inside.load(ordering: .relaxed) == 0)
    }
}
