import Foundation

/// One record of a query's results.
package struct QueryRow: Sendable {
    /// The identifier key.
    package var key: [UInt8]
    /// The record, schema-less.
    package var record: RecordValue

    package init(key: [UInt8], record: RecordValue) {
        self.key = key
        self.record = record
    }
}

extension Store {
    /// Runs a query without model types: every record of the entity is read as a `RecordValue`,
    /// the predicate evaluated on it, the matches sorted (ties by identifier) and windowed.
    ///
    /// The query is checked first against the entity's fields (`check(_:)`), unless it runs in
    /// the caller's transaction: the caller then checks it before opening that transaction.
    ///
    /// - Throws: `RillError(.unknownEntity)` when the store has no such entity; the errors of
    ///   `check(_:)` for a field the entity does not have or a comparison of mismatched kinds.
    ///
    /// - Parameters:
    ///   - forceScan: ignore indexes (to compare plans; results are the same).
    ///   - transaction: read in it instead of a transaction of the query's own.
    package func run(
        _ query: Query, forceScan: Bool = false, in transaction: StoreSnapshot? = nil
    ) throws -> [QueryRow] {
        let entity = try existingEntity(query.entity)
        if transaction == nil { try check(query) }
        let plan =
            forceScan
            ? QueryPlan(access: .scan, isSorted: query.sort.isEmpty)
            : QueryPlanner.plan(query.predicate, sort: query.sort, limit: query.limit, entity: entity)
        var rows: [QueryRow] = []
        let window = QueryWindow(offset: query.offset, limit: query.limit)
        let wanted = plan.isSorted ? window.end : nil
        // The fields the predicate reads: a candidate is parsed whole only once it matches.
        let predicateFields = plan.coversPredicate ? nil : query.predicate?.topLevelFields
        try forEachCandidate(of: plan, in: entity, transaction: transaction) { key, bytes in
            // When the index ranges are exactly the predicate, every candidate matches.
            if !plan.coversPredicate, let predicate = query.predicate {
                let tested =
                    try predicateFields.map { try Self.recordValue(bytes, key: key, entity: query.entity, fields: $0) }
                    ?? Self.recordValue(bytes, key: key, entity: query.entity)
                if !QueryEvaluator.matches(predicate, tested) { return true }
            }
            let record = try Self.recordValue(bytes, key: key, entity: query.entity)
            rows.append(QueryRow(key: Array(key), record: record))
            return wanted.map { rows.count < $0 } ?? true
        }
        if !plan.isSorted {
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
        return Array(rows[window.range(in: rows.count)])
    }

    /// A stored record read without its model type.
    ///
    /// - Throws: `RillError(.corruptStore)` naming the entity and identifier when the bytes are unreadable.
    package static func recordValue(
        _ bytes: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, entity: String, fields: Set<String>? = nil
    ) throws -> RecordValue {
        do {
            if let fields { return try RecordValue(record: bytes, fields: fields) }
            return try RecordValue(record: bytes)
        } catch {
            let id = AnyIdentifier(storageKey: key).map { "\($0)" } ?? "?"
            throw RillError(.corruptStore, "the stored \(entity) \(id) is unreadable: \(error)", underlyingError: error)
        }
    }

    /// Calls `body` with the identifier key and record of each candidate of `plan`, in the plan's
    /// order, inside one read transaction; `body` returns false to stop.
    /// With `transaction`, reads in it instead of a transaction of its own.
    package func forEachCandidate(
        of plan: QueryPlan, in entity: EntityStorage, transaction: StoreSnapshot? = nil,
        _ body: (_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        func run(_ txn: StoreSnapshot) throws {
            switch plan.access {
            case .scan:
                try txn.forEachRecord(of: entity, body)
            case .order(let index):
                var seen: Set<[UInt8]>?
                try walk(
                    index, KeyRange(lower: [0x00], upper: nil), entity: entity, txn: txn, seen: &seen, ordered: true,
                    body)
            case .ranges(let index, let ranges, _):
                var seen: Set<[UInt8]>? = ranges.count > 1 ? [] : nil
                for range in ranges {
                    guard
                        try walk(index, range, entity: entity, txn: txn, seen: &seen, ordered: plan.isSorted, body)
                    else { return }
                }
            case .union(let parts):
                var seen: Set<[UInt8]>? = []
                for part in parts {
                    for range in part.ranges {
                        guard
                            try walk(part.index, range, entity: entity, txn: txn, seen: &seen, ordered: false, body)
                        else { return }
                    }
                }
            }
        }
        if let transaction { try run(transaction) } else { try read(run) }
    }

    /// The number of records `index` lists in `ranges`, read from the index alone.
    package func countKeys(of index: IndexStorage, in ranges: [KeyRange]) throws -> Int {
        try read { txn in
            var count = 0
            for range in ranges {
                try txn.forEachEntry(of: index, from: range.lower, before: range.upper) { _, value in
                    count += try IndexEntry.identifierCount(value: value, index: index.name)
                    return true
                }
            }
            return count
        }
    }

    /// Walks one key range of an index, handing each record to `body`; false when `body` stopped.
    ///
    /// With `ordered`, records come in the order of their values' whole encodings, then
    /// identifier: entries whose keys agree up to the end of a cut value (long values with a
    /// common prefix, whatever the fields after it hold) are read together and sorted by their
    /// records' values before they are handed on.
    @discardableResult
    private func walk(
        _ index: IndexStorage, _ range: KeyRange, entity: EntityStorage, txn: StoreSnapshot,
        seen: inout Set<[UInt8]>?, ordered: Bool,
        _ body: (_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        func record(_ id: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer {
            guard let record = try txn.record(of: entity, key: id) else {
                throw RillError(
                    .corruptStore, "the index \(entity.name)(\(index.name)) lists a record that does not exist")
            }
            return record
        }
        func emit(_ id: UnsafeRawBufferPointer, _ bytes: UnsafeRawBufferPointer? = nil) throws -> Bool {
            if seen != nil, seen!.insert(Array(id)).inserted == false { return true }
            return try body(id, try bytes ?? record(id))
        }
        // Records whose keys tie up to the end of a cut value, waiting to be sorted.
        var tied: (prefix: [UInt8], ids: [[UInt8]])?
        func flushTied() throws -> Bool {
            guard let group = tied else { return true }
            tied = nil
            var members: [(order: [UInt8], id: [UInt8], bytes: UnsafeRawBufferPointer)] = []
            for id in group.ids {
                let bytes = try id.withUnsafeBytes { try record($0) }
                let value = try id.withUnsafeBytes {
                    try Self.recordValue(bytes, key: $0, entity: entity.name, fields: index.topLevelFields)
                }
                var order: [UInt8] = []
                for path in index.fieldPaths {
                    try IndexKey.append(QueryEvaluator.read(path, from: value), to: &order)
                }
                members.append((order + id, id, bytes))
            }
            members.sort { OrderKey.precedes($0.order, $1.order) }
            for member in members {
                guard try member.id.withUnsafeBytes({ try emit($0, member.bytes) }) else { return false }
            }
            return true
        }
        let finished = try txn.forEachEntry(of: index, from: range.lower, before: range.upper) { key, value in
            let extent = try index.valuesExtent(of: key, entity: entity.name)
            if ordered, let cutEnd = extent.cutEnd {
                let ids = try IndexEntry.identifiers(
                    key: key, valuesLength: extent.length, value: value, index: index.name)
                let prefix = Array(key[..<cutEnd])
                if let group = tied, group.prefix == prefix {
                    tied!.ids += ids
                } else {
                    guard try flushTied() else { return false }
                    tied = (prefix, ids)
                }
            } else {
                guard try flushTied() else { return false }
                if value.isEmpty {
                    // The common case: one identifier, the key's suffix, read in place.
                    guard try emit(UnsafeRawBufferPointer(rebasing: key[extent.length...])) else { return false }
                } else {
                    for id in try IndexEntry.list(value, index: index.name) {
                        guard try id.withUnsafeBytes({ try emit($0) }) else { return false }
                    }
                }
            }
            return true
        }
        return try finished && flushTied()
    }

    /// A human-readable plan of `query`: how records are found, what is evaluated on each, the order and window.
    package func explain(_ query: Query) throws -> String {
        let entity = try existingEntity(query.entity)
        try check(query)
        let count = try recordCount(of: entity)
        let plan = QueryPlanner.plan(query.predicate, sort: query.sort, limit: query.limit, entity: entity)
        var lines: [String] = []
        lines += plan.describeAccess(entity: query.entity, recordCount: count, hasIndexes: !entity.indexes.isEmpty)
        if let predicate = query.predicate {
            lines.append("filter: \(predicate) — evaluated on each candidate record")
        }
        if plan.isSorted {
            lines.append(
                query.sort.isEmpty ? "order: identifier (scan order)" : "order: from the index, no sort needed")
        } else {
            let keys = query.sort.map { $0.path.joined(separator: ".") + ($0.ascending ? "" : " desc") }
            lines.append(
                "order: sort by \(keys.isEmpty ? "identifier" : keys.joined(separator: ", ") + ", then identifier")")
        }
        if query.offset != nil || query.limit != nil {
            lines.append("window: offset \(query.offset ?? 0), limit \(query.limit.map(String.init) ?? "none")")
            if plan.isSorted, query.limit != nil { lines.append("stops reading once the window is full") }
        }
        if case .scan = plan.access {
            lines.append("estimated rows examined: \(count)")
        }
        return lines.joined(separator: "\n")
    }
}
