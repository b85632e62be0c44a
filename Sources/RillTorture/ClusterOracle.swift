import Rill

/// The results of each of the cluster suite's live queries after every commit of the log,
/// worked out by replaying the stream's entries in plain Swift and evaluating each query's
/// predicate on every record (``ClusterQuery/evaluate(_:)``): the oracle the nodes' journals are
/// checked against.
///
/// A query is evaluated again after a commit only when one of the commit's records matched it
/// before or matches it after: a record that matches neither cannot change which records match,
/// so the results stay as they were.
package struct ClusterOracle: Sendable {
    package let queries: [ClusterQuery]
    /// For each query, every commit that changed its results, in order, with the results after it.
    package private(set) var changes: [[(sequence: UInt64, rows: [ClusterQuery.Row])]]
    /// The records after the last commit, by identifier.
    package private(set) var items: [String: ClusterQuery.Item] = [:]
    package private(set) var last: UInt64 = 0

    /// Replays `entries`, the log's commits from 1 on.
    package init(queries: [ClusterQuery], entries: [LogEntry]) throws {
        self.queries = queries
        changes = queries.map { _ in [] }
        var current = queries.map { _ in [ClusterQuery.Row]() }
        // The records in ascending order of number (no two share one), for the evaluations.
        var sorted: [ClusterQuery.Item] = []
        for entry in entries {
            last = entry.sequence
            var touched = Set<Int>()
            for change in entry.changes where change.entity == ClusterItem.entity {
                guard case .string(let id)? = change.key.withUnsafeBytes({ AnyIdentifier(storageKey: $0) }) else {
                    continue
                }
                let old = items[id]
                let new = try change.record.flatMap { try ClusterItem.item(key: change.key, record: $0) }
                items[id] = change.kind == .delete ? nil : new
                if let old, let index = Self.position(of: old.number, in: sorted), sorted[index] == old {
                    sorted.remove(at: index)
                }
                if change.kind != .delete, let new {
                    sorted.insert(new, at: Self.position(of: new.number, in: sorted) ?? sorted.count)
                }
                for (index, query) in queries.enumerated()
                where old.map(query.matches) == true || (change.kind != .delete && new.map(query.matches) == true) {
                    touched.insert(index)
                }
            }
            for index in touched.sorted() {
                let rows = queries[index].evaluate(sortedByNumber: sorted)
                if rows != current[index] {
                    current[index] = rows
                    changes[index].append((entry.sequence, rows))
                }
            }
        }
    }

    /// The index of the first item whose number is not below `number`, nil when all are below.
    private static func position(of number: Int, in sorted: [ClusterQuery.Item]) -> Int? {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle].number < number { low = middle + 1 } else { high = middle }
        }
        return low < sorted.count ? low : nil
    }

    /// Query `query`'s results as of commit `sequence`.
    package func rows(_ query: Int, at sequence: UInt64) -> [ClusterQuery.Row] {
        let index = upperBound(query, sequence)
        return index == 0 ? [] : changes[query][index - 1].rows
    }

    /// The commits after `start` and up to `end` that changed query `query`'s results.
    package func changed(_ query: Int, after start: UInt64, through end: UInt64) -> [UInt64] {
        var index = upperBound(query, start)
        var found: [UInt64] = []
        while index < changes[query].count, changes[query][index].sequence <= end {
            found.append(changes[query][index].sequence)
            index += 1
        }
        return found
    }

    /// The index of the first change of `query` after commit `sequence` (the count when none is).
    private func upperBound(_ query: Int, _ sequence: UInt64) -> Int {
        let list = changes[query]
        var low = 0
        var high = list.count
        while low < high {
            let middle = (low + high) / 2
            if list[middle].sequence <= sequence { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
