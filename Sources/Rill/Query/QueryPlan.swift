import Foundation

/// How a query finds its candidate records.
package struct QueryPlan: Sendable {
    package enum Access: Sendable {
        /// Every record, in identifier order.
        case scan
        /// The records whose index keys fall in `ranges` (each `[lower, upper)`), in index order.
        case ranges(IndexStorage, [KeyRange], conditions: [QueryNode])
        /// Every record, in the order of the index (which is the query's sort order).
        case order(IndexStorage)
        /// The records of several index scans, each record once: the branches of an OR.
        case union([(index: IndexStorage, ranges: [KeyRange], conditions: [QueryNode])])
    }

    /// How an index walk that gives the query's order reads the index: in which direction, and
    /// which of its leading fields make the order.
    package struct Walk: Hashable, Sendable {
        /// The keys are read from the last to the first: a sort whose every key is descending.
        package var reverse = false
        /// How many of the index's leading fields the order follows; nil for all of them. Keys
        /// that agree on these fields are handed on in identifier order (the sort's ties), not in
        /// the order of the fields after them.
        package var fields: Int? = nil

        package init(reverse: Bool = false, fields: Int? = nil) {
            self.reverse = reverse
            self.fields = fields
        }
    }

    package var access: Access
    /// The candidates come in the query's sort order, so no sort is needed and a limit stops early.
    package var isSorted: Bool
    /// How an index is walked when `isSorted` (the forward key order otherwise).
    package var walk = Walk()
    /// Why the planner preferred this access to another, when the data decided it (the
    /// estimate it compared), for `explain`.
    package var choice: String? = nil
    /// The index ranges express the whole predicate exactly: every candidate matches, so counting
    /// the index's keys counts the results.
    package var coversPredicate = false
}

extension QueryPlan {
    /// How the candidates are found, in words: the first lines of an `explain`.
    package func describeAccess(entity: String, recordCount: Int, hasIndexes: Bool) -> [String] {
        accessLines(entity: entity, recordCount: recordCount, hasIndexes: hasIndexes) + (choice.map { [$0] } ?? [])
    }

    private func accessLines(entity: String, recordCount: Int, hasIndexes: Bool) -> [String] {
        func ranges(_ index: IndexStorage, _ ranges: [KeyRange], _ conditions: [QueryNode]) -> String {
            let condition = conditions.map(\.description).joined(separator: " and ")
            return
                "index \(entity)(\(index.name)): \(ranges.count) key range\(ranges.count == 1 ? "" : "s") for \(condition)"
        }
        switch access {
        case .scan:
            let note = hasIndexes ? "no index applies" : "the entity has no index"
            return ["scan: every record of \(entity) in identifier order (\(recordCount) records; \(note))"]
        case .ranges(let index, let keyRanges, let conditions):
            let order = isSorted ? describeWalk(index, always: false) : ""
            return [
                ranges(index, keyRanges, conditions) + " (of \(recordCount) records)"
                    + (order.isEmpty ? "" : "; " + order)
            ]
        case .order(let index):
            return ["index \(entity)(\(index.name)): " + describeWalk(index, always: true)]
        case .union(let parts):
            return ["union of \(parts.count) index scans, each record once (of \(recordCount) records):"]
                + parts.map { "  " + ranges($0.index, $0.ranges, $0.conditions) }
        }
    }

    /// The order a sorted walk of `index` gives, in words: "records in the index's reverse order,
    /// which is the sort's". Empty for ranges read forward over the whole key, whose order goes
    /// without saying (unless `always`).
    private func describeWalk(_ index: IndexStorage, always: Bool) -> String {
        var ties = ""
        if let fields = walk.fields, fields < index.fieldPaths.count {
            let leading = index.fieldPaths.prefix(fields).map { $0.joined(separator: ".") }.joined(separator: ", ")
            ties = ", ties on (\(leading)) in identifier order"
        }
        guard always || walk.reverse || !ties.isEmpty else { return "" }
        let order = walk.reverse ? "reverse order (read from the last key)" : "order"
        return "records in the index's \(order)\(ties), which is the sort's"
    }
}
