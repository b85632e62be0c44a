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
    private let mailbox = Lock<(calls: [Call], scheduled: Bool)>(([], false))

    /// A call to make: an observer's change (no closure to allocate for each observer of a
    /// commit), or a closure.
    private enum Call {
        case change(LiveSink, PendingChange)
        /// One change for several observers: the observers on one queue of the live queries
        /// that share a result.
        case changes([LiveSink], PendingChange)
        case closure(@Sendable () -> Void)
    }

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
        enqueue(.closure(call))
    }

    /// Queues `sink.run(change)`: how a live query's observer on a queue is told of a change.
    func post(_ change: PendingChange, to sink: LiveSink) {
        enqueue(.change(sink, change))
    }

    /// Queues `sink.run(change)` for each of `sinks`, in order, as one call.
    func post(_ change: PendingChange, to sinks: [LiveSink]) {
        enqueue(sinks.count == 1 ? .change(sinks[0], change) : .changes(sinks, change))
    }

    private func enqueue(_ call: Call) {
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
            let calls = mailbox.withLock { mailbox -> [Call] in
                if mailbox.calls.isEmpty { mailbox.scheduled = false }
                defer { mailbox.calls = [] }
                return mailbox.calls
            }
            if calls.isEmpty { return }
            for call in calls {
                switch call {
                case .change(let sink, let change): sink.run(change)
                case .changes(let sinks, let change): sinks[0].run(change, for: sinks)
                case .closure(let call): call()
                }
            }
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

/// The observers on queues that one change is for, gathered by queue, so that each queue is
/// posted the change once for all its observers.
struct DeliveryBatch {
    /// The first queue added, and its observers: most often every observer is on one queue.
    private var queue: DeliveryQueue?
    private var sinks: [LiveSink] = []
    /// The other queues, and their observers.
    private var others: [(queue: DeliveryQueue, sinks: [LiveSink])] = []

    /// How many observers on the first queue are posted together at most, so that the queue
    /// starts on them while the follower gathers the next ones.
    static let chunk = 64

    mutating func add(_ sink: LiveSink, on queue: DeliveryQueue, change: PendingChange) {
        if queue === self.queue {
            sinks.append(sink)
            if sinks.count == Self.chunk {
                queue.post(change, to: sinks)
                sinks.removeAll(keepingCapacity: true)
            }
        } else if self.queue == nil {
            self.queue = queue
            sinks.append(sink)
        } else if let index = others.firstIndex(where: { $0.queue === queue }) {
            others[index].sinks.append(sink)
        } else {
            others.append((queue, [sink]))
        }
    }

    /// Posts `change` to every observer added, and forgets them.
    mutating func post(_ change: PendingChange) {
        guard let queue else { return }
        if !sinks.isEmpty { queue.post(change, to: sinks) }
        for (queue, sinks) in others { queue.post(change, to: sinks) }
        self = DeliveryBatch()
    }
}
