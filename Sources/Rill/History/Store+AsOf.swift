import Foundation

extension Store {
    /// The results of `source` exactly as they were after commit `sequence`, read in `snapshot`:
    /// with their sort, offset and limit.
    ///
    /// The current matches, corrected by the commits since: each record a later commit changed
    /// is put back as the first of those commits found it (its record before), or left out when
    /// it did not exist then. The cost follows the commits walked (those after `sequence`) and
    /// the window, not the size of the store; a query without a limit reads every current match.
    ///
    /// - Throws: `.misuse` when `sequence` is past the log's last commit, `.historyCompacted`
    ///   when it is before the horizon of a compacted log; the errors of a fetch.
    func rows<Source: LiveRowSource>(
        of source: Source, asOf sequence: UInt64, in snapshot: StoreSnapshot
    ) throws -> [Source.Element] {
        let head = try log.head(in: snapshot)
        guard sequence <= head else {
            throw RillError(.misuse, "cannot read the store as of commit \(sequence): the log's last commit is \(head)")
        }
        try log.requireRetained(sequence, for: "read the store as of commit \(sequence)", in: snapshot)
        let query = MaintainedQuery(source)
        if sequence == head {
            try query.load(in: snapshot, store: self)
        } else {
            let entries = try log.entries(after: sequence, in: snapshot)
            try query.loadWindow(
                before: CommitContext(store: self, transaction: snapshot, entries: entries, index: 0, snapshot: head))
        }
        return query.results().map(Source.element)
    }

    /// The rows of a text query as they were at `position` (a commit, or the last commit made
    /// at or before a date), and that commit's sequence, read in one snapshot.
    ///
    /// The query is checked against the entity's fields as they are now (`check(_:)`).
    ///
    /// - Throws: `.misuse` when the position is past the log's last commit; the errors of
    ///   `run(_:forceScan:in:)`.
    package func run(_ query: Query, asOf position: LogPosition) throws -> (rows: [QueryRow], sequence: UInt64) {
        let entity = try existingEntity(query.entity)
        try check(query, entity: entity)
        let readsRelated = QueryRelationships(query.predicate, relationships: entity.relationships) != nil
        return try read { snapshot in
            let sequence = try position.sequence(in: self, snapshot: snapshot)
            if readsRelated, try sequence != log.head(in: snapshot) {
                throw RillError(
                    .misuse,
                    "a query that reads through relationships cannot be read as of an earlier commit: "
                        + "related records are read as they are now")
            }
            return (
                try rows(of: try RecordRowSource(query, store: self, in: snapshot), asOf: sequence, in: snapshot),
                sequence
            )
        }
    }
}
