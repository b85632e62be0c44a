import Rill

extension Store {
    /// Saves changes given as JSON in one atomic save, the one way the daemon, `rill insert`,
    /// `update`, `delete` and `rill import` write: every change is checked against its entity and
    /// prepared, then all are committed in one write transaction.
    ///
    /// - Parameters:
    ///   - declarations: entities (an import's descriptions) created with their indexes and field
    ///     kinds in the same transaction, when the store lacks them.
    ///   - beforeCommit: called once the changes are prepared, before the commit starts.
    /// - Returns: the commit's sequence, nil when the save changed nothing.
    /// - Throws: ``RillError``; nothing is written then.
    package func save(
        _ changes: [JSONChange], author: String?, declaring declarations: [EntityDeclaration] = [],
        beforeCommit: () -> Void = {}
    ) throws -> SaveResult {
        let prepared = try prepare(changes, declaring: declarations)
        beforeCommit()
        let entry = try commit(prepared, author: author, declaring: declarations)
        return SaveResult(sequence: entry?.sequence, changeCount: entry?.changes.count ?? 0)
    }
}
