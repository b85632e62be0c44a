import Foundation

/// One record of a query's results.
package struct QueryRow: Sendable {
    /// The identifier key.
    package var key: [UInt8]
    /// The record, schema-less.
    package var record: RecordValue
}

extension Store {
    /// Runs a query without model types: every record of the entity is read as a `RecordValue`,
    /// the predicate evaluated on it, the matches sorted (ties by identifier) and windowed.
    ///
    /// - Throws: `RillError(.unknownEntity)` when the store has no such entity.
    package func run(_ query: Query) throws -> [QueryRow] {
        guard let entity = try entity(named: query.entity) else {
            let known = try entityNames()
            throw RillError(
                .unknownEntity,
                "the store has no entity \(query.entity)"
                    + (known.isEmpty ? "" : " (it has: \(known.joined(separator: ", ")))"))
        }
        var rows: [QueryRow] = []
        let wanted =
            query.sort.isEmpty
            ? query.limit.map { limit in
                limit.addingReportingOverflow(max(query.offset ?? 0, 0)).overflow
                    ? Int.max : limit + max(query.offset ?? 0, 0)
            }
            : nil
        try forEachRecord(of: entity) { key, bytes in
            let record: RecordValue
            do {
                record = try RecordValue(record: bytes)
            } catch {
                let id = AnyIdentifier(storageKey: key).map { "\($0)" } ?? "?"
                throw RillError(.corruptStore, "the stored \(query.entity) \(id) is unreadable: \(error)")
            }
            if let predicate = query.predicate, !QueryEvaluator.matches(predicate, record) { return true }
            rows.append(QueryRow(key: Array(key), record: record))
            return wanted.map { rows.count < $0 } ?? true
        }
        if !query.sort.isEmpty {
            let keys = query.sort
            rows.sort { lhs, rhs in
                for key in keys {
                    let order = QueryValueOrder.sortOrder(
                        QueryEvaluator.read(key.path, from: lhs.record), QueryEvaluator.read(key.path, from: rhs.record)
                    )
                    if order == .orderedSame { continue }
                    return (order == .orderedAscending) == key.ascending
                }
                return lhs.key.lexicographicallyPrecedes(rhs.key)
            }
        }
        return Array(rows.dropFirst(max(query.offset ?? 0, 0)).prefix(max(query.limit ?? .max, 0)))
    }

    /// A human-readable plan of `query`: how records are found, what is evaluated on each, the order and window.
    package func explain(_ query: Query) throws -> String {
        guard let entity = try entity(named: query.entity) else {
            throw RillError(.unknownEntity, "the store has no entity \(query.entity)")
        }
        let count = try recordCount(of: entity)
        var lines = ["scan: every record of \(query.entity) in identifier order (\(count) records; no index applies)"]
        if let predicate = query.predicate {
            lines.append("filter: \(predicate) — evaluated on each record")
        }
        if query.sort.isEmpty {
            lines.append("order: identifier")
        } else {
            let keys = query.sort.map { $0.path.joined(separator: ".") + ($0.ascending ? "" : " desc") }
            lines.append("order: sort by \(keys.joined(separator: ", ")), then identifier")
        }
        if query.offset != nil || query.limit != nil {
            lines.append("window: offset \(query.offset ?? 0), limit \(query.limit.map(String.init) ?? "none")")
        }
        if query.sort.isEmpty, query.limit != nil {
            lines.append("stops scanning once the window is full")
        }
        lines.append(
            "estimated rows examined: \(query.sort.isEmpty && query.limit != nil ? "at most \(count)" : "\(count)")")
        return lines.joined(separator: "\n")
    }
}
