import Foundation

extension QueryExecutor {
    /// The models of `window`, read from the one index range that is exactly the predicate, when
    /// the plan its prepared translation keeps gives one (made an array by `move`, as
    /// `OrderedModels.results` says); nil when it does not, and the fetch is then planned as any
    /// other.
    ///
    /// This is a prepared statement's execution: the captured values, bound to the template's
    /// stand-ins, make the range's keys directly (`PreparedPlan.exactRead`), with no bound
    /// predicate planned, no filter, and no test of the models. It is taken only where the
    /// planned fetch would read the same records in the same order and test none of them:
    /// - the predicate is translated completely, and every conjunct of it is a comparison of an
    ///   indexed field with a captured value that the range takes, no value cut to a prefix;
    /// - the range is read in the fetch's order: forward (a sort on the index's fields that the
    ///   index order serves, or identifier order with every indexed field fixed), or backward for
    ///   a sort on all of them descending (ties still in identifier order);
    /// - there are no staged changes to merge, no relationships to read, and no snapshot given.
    ///
    /// An entry whose values are cut to a prefix (a long string among fields after the fixed
    /// ones) is in no particular order among its ties: the read stops there, and the fetch is
    /// planned instead.
    func exactRangeModels(
        window: QueryWindow, moving move: (UnsafeMutableRawPointer, Int) -> [T]
    ) throws -> [T]? {
        guard transaction == nil, relationships == nil, predicate.exact != nil, StorageHeader.isEmpty(staged),
            let prepared = predicate.preparedPlan, let entity
        else { return nil }
        var textPaths: [[String]] = []
        let leaves = predicate.leafValues
        guard let sort = Self.walkableSortKeys(descriptor.sortBy, textPaths: &textPaths), textPaths.isEmpty,
            let current = try store.entity(named: entity.name),
            let read = prepared.exactRead(
                entity: current, sort: sort, hasLimit: window.end != nil, conjunctCount: prepared.operands.count,
                { position in
                    // The template's stand-in at this conjunct, replaced by its captured value.
                    guard let operand = prepared.operands[position], operand.leaf < leaves.count else { return nil }
                    return (operand.comparison, leaves[operand.leaf])
                })
        else { return nil }
        var models = OrderedModels(of: T.self, window: window)
        var spare = SpareDecoder.take()
        defer { SpareDecoder.putBack(spare) }
        let ordered = try store.read { txn in
            try store.forEachRecordInExactRange(
                of: read.index, read.range, backward: read.backward, entity: current, txn: txn
            ) { key, bytes in
                models.add(try T.decodeStored(from: bytes, key: key, reusing: &spare))
            }
        }
        return ordered ? models.results(T.self, moving: move) : nil
    }
}
