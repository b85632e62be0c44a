import Foundation

/// The live queries a follower keeps to follow again (`FollowedQuery.canRecover`): those stopped
/// by a record they could not read, until a commit to their entity makes the store read; and
/// those whose unread commits another process compacted away, loaded again at once. Owned by the
/// follower thread.
struct SuspendedQueries {
    struct Entry {
        var query: any FollowedQuery
        /// The identifier keys of the query's entity written since it was suspended; nil when
        /// they are unknown (commits compacted before they were read), and any record may have
        /// changed.
        var changed: Set<[UInt8]>?
        /// Whether a record of the entity was written since the last try.
        var due: Bool
    }

    private var entries: [Int32: Entry] = [:]

    var isEmpty: Bool { entries.isEmpty }

    /// Keeps `query`, known to the follower as `id`, to follow again; with `changed` nil (every
    /// record may have changed) it is tried at the next step.
    mutating func suspend(_ query: any FollowedQuery, as id: Int32, changed: Set<[UInt8]>?) {
        entries[id] = Entry(query: query, changed: changed, due: changed == nil)
    }

    /// Lets go of the query that is `object`, if it is kept.
    mutating func remove(_ object: ObjectIdentifier) {
        if let id = entries.first(where: { ObjectIdentifier($0.value.query) == object })?.key { entries[id] = nil }
    }

    /// Notes, for each query of an entity `entry` changes, the records it wrote.
    mutating func note(_ entry: LogEntry) {
        for (id, state) in entries {
            var state = state
            for change in entry.changes where change.entity == state.query.entityName {
                state.changed?.insert(change.key)
                state.due = true
            }
            entries[id] = state
        }
    }

    /// Commits no query read were compacted away: what each query's entity had written since
    /// it was suspended is unknown, and each is tried again at the next step.
    mutating func forgetChanges() {
        for id in entries.keys {
            entries[id]?.changed = nil
            entries[id]?.due = true
        }
    }

    /// Tries again each query whose entity a commit changed since its last try (or whose
    /// changes are unknown): one that reads now is handed to `follow`, with the publication of
    /// its recovery; one that still cannot read waits for the next commit to its entity.
    mutating func recover(
        in txn: StoreSnapshot, sequence: UInt64, follow: (Int32, any FollowedQuery) -> Void
    ) -> [LivePublication] {
        var publications: [LivePublication] = []
        for (id, state) in entries where state.due {
            do {
                let publication = try state.query.recover(in: txn, sequence: sequence, changed: state.changed)
                entries[id] = nil
                follow(id, state.query)
                if let publication { publications.append(publication) }
            } catch {
                entries[id]?.due = false
            }
        }
        return publications
    }
}
