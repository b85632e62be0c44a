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

    package var access: Access
    /// The candidates come in the query's sort order, so no sort is needed and a limit stops early.
    package var isSorted: Bool
    /// The index ranges express the whole predicate exactly: every candidate matches, so counting
    /// the index's keys counts the results.
    package var coversPredicate = false
}

extension QueryPlan {
    /// How the candidates are found, in words: the first lines of an `explain`.
    package func describeAccess(entity: String, recordCount: Int, hasIndexes: Bool) -> [String] {
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
            return [ranges(index, keyRanges, conditions) + " (of \(recordCount) records)"]
        case .order(let index):
            return ["index \(entity)(\(index.name)): records in the index's order, which is the sort's"]
        case .union(let parts):
            return ["union of \(parts.count) index scans, each record once (of \(recordCount) records):"]
                + parts.map { "  " + ranges($0.index, $0.ranges, $0.conditions) }
        }
    }
}
