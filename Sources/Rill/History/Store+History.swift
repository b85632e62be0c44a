import Foundation

extension Store {
    /// The commits `descriptor` selects, as `snapshot` sees the log, each holding only the
    /// changes of the entities it asks for; in its order, at most its limit.
    ///
    /// The walk covers the commits between the sequence bounds, narrowed by the date bounds (a
    /// binary search, see `Log.lastSequence(atOrBefore:in:)`): its cost follows the commits in
    /// that range, whatever the store's size.
    ///
    /// - Throws: `.misuse` when `after` is past the log's last commit (a token of another store,
    ///   or of a store restored from an older backup); `.historyCompacted` when `after`, or
    ///   `since`, is before the horizon of a compacted log (without them, the history starts
    ///   after the horizon).
    package func history(_ descriptor: HistoryDescriptor, in snapshot: StoreSnapshot) throws -> [LogEntry] {
        let head = try log.head(in: snapshot)
        if let after = descriptor.after, after.sequence > head {
            throw RillError(
                .misuse, "cannot read the history after commit \(after.sequence): the log's last commit is \(head)")
        }
        // A compacted log answers from its horizon on; a bound before it is refused.
        if let horizon = try log.horizon(in: snapshot) {
            if let after = descriptor.after, after.sequence < horizon.sequence {
                throw log.compacted(
                    horizon, asking: after.sequence, for: "read the history after commit \(after.sequence)")
            }
            if let since = descriptor.since, since < horizon.timestamp {
                throw log.compacted(
                    horizon, asking: 0, for: "read the history since \(ISO8601Time.string(since))")
            }
        }
        let limit = descriptor.fetchLimit ?? .max
        guard limit > 0, let first = try log.first(in: snapshot) else { return [] }
        var low = max(first, (descriptor.after?.sequence ?? 0) + 1)
        var high = min(head, descriptor.through?.sequence ?? head)
        // The date bounds narrow the walk with a margin (a timestamp is stored as seconds since
        // 1970, a Date counts from 2001: the two may round apart); each commit is then held to
        // them exactly.
        let margin: TimeInterval = 0.001
        if let since = descriptor.since {
            low = max(low, try log.lastSequence(atOrBefore: since.addingTimeInterval(-margin), in: snapshot))
        }
        if let until = descriptor.until {
            high = min(high, try log.lastSequence(atOrBefore: until.addingTimeInterval(margin), in: snapshot))
        }
        guard low <= high else { return [] }
        var selected: [LogEntry] = []
        func consider(_ entry: LogEntry) -> Bool {
            guard entry.sequence >= low, entry.sequence <= high else { return false }
            if let since = descriptor.since, entry.timestamp < since { return true }
            if let until = descriptor.until, entry.timestamp > until { return true }
            if let authors = descriptor.authors, !(entry.author.map(authors.contains) ?? false) { return true }
            var kept = entry
            if let entities = descriptor.entityNames {
                kept.changes.removeAll { !entities.contains($0.entity) }
                if kept.changes.isEmpty { return true }
            }
            selected.append(kept)
            return selected.count < limit
        }
        switch descriptor.sortOrder {
        case .forward:
            try log.forEachEntry(after: low - 1, in: snapshot, consider)
        case .reverse:
            // (A head of the largest sequence is a damaged key, which `rill check` reports.)
            try log.forEachEntry(before: high < .max ? high + 1 : high, in: snapshot, consider)
        }
        return selected
    }
}
