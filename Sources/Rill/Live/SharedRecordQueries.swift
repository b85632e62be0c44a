import Foundation

/// The shared text queries of one follower, by query: where a new ``RecordLiveQuery`` finds the
/// maintained result it can share (see `SharedRecordQuery`).
///
/// Owned by the follower's thread.
final class SharedRecordQueries {
    private var groups: [Query: [SharedRecordQuery]] = [:]

    /// The followed query that reads the records as `source` does, if there is one.
    func group(for source: RecordRowSource) -> SharedRecordQuery? {
        groups[source.query]?.first { $0.query.source.reads(as: source) && !$0.failed }
    }

    func add(_ group: SharedRecordQuery) {
        groups[group.query.source.query, default: []].append(group)
    }

    func remove(_ group: SharedRecordQuery) {
        let query = group.query.source.query
        groups[query]?.removeAll { $0 === group }
        if groups[query]?.isEmpty == true { groups[query] = nil }
    }

    /// How many shared queries there are (for tests).
    var count: Int { groups.values.reduce(0) { $0 + $1.count } }
}
