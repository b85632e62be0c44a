import Dispatch
import RillLocks

/// The serial queue through which observers of live queries on one dispatch queue are called:
/// it keeps each observer's changes in commit order on a concurrent queue too.
///
/// Calls go through a mailbox: the queue is sent a block when the mailbox gets its first call,
/// and that block makes every call the mailbox gets meanwhile, in order. So the observers of a
/// commit's changes start while the follower is still handing out the others, and a commit that
/// changes many queries costs one block on the queue rather than one per observer.
///
/// Every observation on the same `DispatchQueue` object shares one, for as long as any of them
/// lives.
final class DeliveryQueue: Sendable {
    let target: DispatchQueue
    let serial: DispatchQueue
    private let key: ObjectIdentifier
    /// Calls not yet made, and whether a block that makes them is on its way.
    private let mailbox = Lock<(calls: [@Sendable () -> Void], scheduled: Bool)>(([], false))

    /// A class, not a struct: with Swift 6.3.1 at `-Onone`, a struct of a weak reference and
    /// another field, kept in a dictionary inside a `Lock`, crashes when the weak reference is
    /// read in `withLock`.
    private final class Entry: @unchecked Sendable {
        // Sendable: read and written under `registry`'s lock only.
        weak var queue: DeliveryQueue?
        /// The queue's identity, compared without loading the weak reference.
        let identity: ObjectIdentifier

        init(_ queue: DeliveryQueue) {
            self.queue = queue
            self.identity = ObjectIdentifier(queue)
        }
    }

    /// By target queue; an entry's target stays alive as long as its delivery queue does, so
    /// its identifier names no other object meanwhile.
    private static let registry = Lock<[ObjectIdentifier: Entry]>([:])

    private init(target: DispatchQueue) {
        self.target = target
        self.key = ObjectIdentifier(target)
        self.serial = DispatchQueue(label: "rill.live-query.observers", target: target)
    }

    /// Queues `call`; sends a block to make it (and the calls that follow it) when none is on
    /// its way.
    func post(_ call: @escaping @Sendable () -> Void) {
        let send = mailbox.withLock { mailbox -> Bool in
            mailbox.calls.append(call)
            defer { mailbox.scheduled = true }
            return !mailbox.scheduled
        }
        if send { serial.async { self.drain() } }
    }

    /// Makes the calls in the mailbox, in order, until it is empty.
    private func drain() {
        while true {
            let calls = mailbox.withLock { mailbox -> [@Sendable () -> Void] in
                if mailbox.calls.isEmpty { mailbox.scheduled = false }
                defer { mailbox.calls = [] }
                return mailbox.calls
            }
            if calls.isEmpty { return }
            for call in calls { call() }
        }
    }

    /// The delivery queue of `target`, made when it has none.
    static func of(_ target: DispatchQueue) -> DeliveryQueue {
        registry.withLock { table in
            if let existing = table[ObjectIdentifier(target)]?.queue { return existing }
            let made = DeliveryQueue(target: target)
            table[ObjectIdentifier(target)] = Entry(made)
            return made
        }
    }

    deinit {
        let (key, identity) = (self.key, ObjectIdentifier(self))
        // Another delivery queue may have taken the entry since this one began to go. Its weak
        // reference is not loaded here: that would hold it, and releasing the last hold on it
        // under the lock would run its deinitializer, which takes the lock.
        Self.registry.withLock { table in
            if table[key]?.identity == identity { table[key] = nil }
        }
    }
}
