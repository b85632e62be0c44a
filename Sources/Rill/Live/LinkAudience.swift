/// The observers of every live query that shares one maintained result, gathered once and
/// kept by the result's link (`LiveQuery.Link`) from commit to commit: a commit's change then
/// goes to each queue's observers as one call, with no work on the follower for each live
/// query or observer.
///
/// It is current while the follower's observer generation (`LogFollower.observerGeneration`)
/// and the link's owners stay as they were: adding, cancelling or finishing an observer, a
/// live query's release, and its first tracked read all advance the generation; a live query
/// joining or leaving changes the owners. A commit's change goes to the owners the link had
/// when the commit was applied (one that leaves in the same step is told of it still). Made
/// on the follower's thread only.
struct LinkAudience {
    let generation: Int
    /// The owners whose live queries were read through what Observation tracks.
    private(set) var tracked: [LinkOwner] = []
    /// The queues observers are called on, and the observers on each.
    private var queues: [DeliveryQueue] = []
    private var queued: [[LiveSink]] = []
    /// The observers that take a change themselves (change streams).
    private var direct: [LiveSink] = []
    /// Every observer, with the publication round it was added after.
    private var entries: [(sink: LiveSink, after: Int)] = []
    /// The latest round an observer was added after.
    private var latestAfter = Int.min

    init(generation: Int) { self.generation = generation }

    mutating func addTracked(_ owner: LinkOwner) { tracked.append(owner) }

    /// An observer added after publication round `after`.
    mutating func add(_ sink: LiveSink, after: Int) {
        entries.append((sink, after))
        latestAfter = max(latestAfter, after)
        guard let queue = sink.deliveryQueue else {
            direct.append(sink)
            return
        }
        if let index = queues.firstIndex(where: { $0 === queue }) {
            queued[index].append(sink)
        } else {
            queues.append(queue)
            queued.append([sink])
        }
    }

    /// Posts `change`, of publication round `round`, to every observer added before that round.
    func post(_ change: PendingChange, round: Int) {
        guard latestAfter < round else {
            // An observer added since the round was published: only the others are told.
            var batch = DeliveryBatch()
            for (sink, after) in entries where after < round { sink.post(change, batch: &batch) }
            batch.post(change)
            return
        }
        for index in queues.indices { queues[index].post(change, to: queued[index]) }
        for sink in direct { sink.post(change) }
    }
}
