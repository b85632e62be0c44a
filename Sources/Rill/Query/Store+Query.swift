import Foundation
import RillLocks

extension Store {
    /// Runs a query without model types: every record of the entity is read as a `RecordValue`
    /// (a record of an earlier version as the current schema reads it: see `RecordEvolution`),
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
        let (entity, memo) = try entityAndMemo(of: query)
        guard let transaction else {
            try check(query, entity: entity, memo: memo)
            // One read for the schema's evolution and the records.
            return try read { try run(query, entity: entity, forceScan: forceScan, in: $0, memo: memo) }
        }
        return try run(query, entity: entity, forceScan: forceScan, in: transaction, memo: memo)
    }

    /// `run(_:)` and the last commit its read sees: the query checked, then run and the head read
    /// in one transaction, its shape looked up once (what the daemon answers a query with).
    package func runWithHead(_ query: Query) throws -> (head: UInt64, rows: [QueryRow]) {
        let (entity, memo) = try entityAndMemo(of: query)
        try check(query, entity: entity, memo: memo)
        return try read { txn in
            (try head(in: txn), try run(query, entity: entity, forceScan: false, in: txn, memo: memo))
        }
    }

    /// The query's entity, and what is remembered of its shape: queries of a shape met before
    /// share its check and its plan (see `QueryShapeMemo`), unless they read through
    /// relationships.
    private func entityAndMemo(of query: Query) throws -> (EntityStorage, QueryShapeMemo.Entry?) {
        let entity = try existingEntity(query.entity)
        return (entity, entity.relationships.isEmpty ? queryShapes.entry(for: query) : nil)
    }

    private func run(
        _ query: Query, entity: EntityStorage, forceScan: Bool, in transaction: StoreSnapshot,
        memo: QueryShapeMemo.Entry?
    ) throws -> [QueryRow] {
        if let relationships = QueryRelationships(query.predicate, relationships: entity.relationships) {
            return try run(query, through: relationships, entity: entity, forceScan: forceScan, in: transaction)
        }
        // Records of earlier versions read as the entity's current schema says.
        let evolution = try self.evolution(of: query.entity, in: transaction)
        // The key names the entity's last query found serve this one's records; the first
        // record gives new ones when it has another number of keys (a record of another version).
        let name = query.entity
        var names = recordKeyNames.withLock { $0[name] }
        var checked = false
        func row(_ key: UnsafeRawBufferPointer, _ bytes: UnsafeRawBufferPointer) throws -> QueryRow {
            let record = try Self.recordValue(bytes, key: key, entity: name, names: names)
            if !checked {
                checked = true
                if case .map(let fields) = record, fields.count != names?.fieldCount,
                    let learned = RecordKeyNames(of: record)
                {
                    names = learned
                    recordKeyNames.withLock { $0[name] = learned }
                }
            }
            return QueryRow(key: Array(key), record: record)
        }
        if !forceScan, evolution == nil, let memo,
            let rows = try exactRangeRows(of: query, entity: entity, plan: memo.plan, in: transaction, row)
        {
            return rows
        }
        let execution = QueryExecution(
            store: self, entity: entity, predicate: query.predicate, isExact: true, sort: query.sort,
            limit: QueryWindow(offset: query.offset, limit: query.limit).end, forceScan: forceScan,
            transaction: transaction, evolution: evolution, prepared: memo?.plan)
        var rows = Self.rows(of: query, sorted: execution.isSorted)
        // The execution's filter is the whole predicate: a candidate is parsed whole only once it
        // matches.
        try execution.collect(into: &rows, row)
        return rows.results()
    }

    /// `exactRangeRows(of:entity:plan:in:_:)` in a read of its own, with the plan `query`'s shape
    /// keeps (for tests: nil also when its shape keeps none yet).
    func exactRangeRows(of query: Query) throws -> [QueryRow]? {
        let (entity, memo) = try entityAndMemo(of: query)
        guard let memo else { return nil }
        return try read { txn in
            try exactRangeRows(of: query, entity: entity, plan: memo.plan, in: txn) { key, bytes in
                QueryRow(key: Array(key), record: try Self.recordValue(bytes, key: key, entity: query.entity))
            }
        }
    }

    /// The rows of `query`, read from the one index range that is exactly its predicate, when
    /// the plan its shape keeps gives one; nil when it does not, and the query runs through its
    /// plan (see `QueryExecutor.exactRangeModels`, the typed fetches' counterpart).
    private func exactRangeRows(
        of query: Query, entity: EntityStorage, plan prepared: PreparedPlan, in transaction: StoreSnapshot,
        _ row: (_ key: UnsafeRawBufferPointer, _ bytes: UnsafeRawBufferPointer) throws -> QueryRow
    ) throws -> [QueryRow]? {
        let window = QueryWindow(offset: query.offset, limit: query.limit)
        guard let predicate = query.predicate, !window.isEmpty else { return nil }
        let conjuncts = QueryPlanner.conjuncts(of: predicate)
        guard
            let read = prepared.exactRead(
                entity: entity, sort: query.sort, hasLimit: window.end != nil, conjunctCount: conjuncts.count,
                { QueryPlanner.comparison(conjuncts[$0]) })
        else { return nil }
        var rows = QueryRows<QueryRow>(window: window)
        let ordered = try forEachRecordInExactRange(
            of: read.index, read.range, backward: read.backward, entity: entity, txn: transaction
        ) { key, bytes in rows.add(try row(key, bytes)) }
        return ordered ? rows.results() : nil
    }

    /// `run(_:forceScan:in:)` for a query whose predicate looks through relationships: the
    /// planner sees the rewritten predicate (no index serves a path through a relationship, the
    /// other conditions may narrow the candidates), and each candidate is tested with its related
    /// records read by `loader` (a live query's, as of the commit it applies), or in `transaction`.
    func run(
        _ query: Query, through relationships: QueryRelationships, entity: EntityStorage, forceScan: Bool,
        in transaction: StoreSnapshot, loader: RelationshipLoader? = nil
    ) throws -> [QueryRow] {
        let execution = QueryExecution(
            store: self, entity: entity, predicate: relationships.predicate, isExact: false, sort: query.sort,
            limit: QueryWindow(offset: query.offset, limit: query.limit).end, forceScan: forceScan,
            transaction: transaction,
            evolution: try evolution(of: query.entity, in: transaction))
        var rows = Self.rows(of: query, sorted: execution.isSorted)
        guard rows.wantsMore else { return rows.results() }
        let loader = loader ?? RelationshipLoader(store: self, snapshot: transaction)
        let name = query.entity
        let fields = relationships.storedFields
        try execution.forEachMatch { key, bytes in
            let tested = try Self.recordValue(bytes, key: key, entity: name, fields: fields)
            let id = Array(key)
            guard try relationships.matches(tested, key: id, entity: name, loader: loader) else { return true }
            return rows.add(QueryRow(key: id, record: try Self.recordValue(bytes, key: key, entity: name)))
        }
        return rows.results()
    }

    /// The rows of `query`'s results, collected in its order: as they come when the candidates
    /// come `sorted`, else sorted by its keys, then identifier.
    private static func rows(of query: Query, sorted: Bool) -> QueryRows<QueryRow> {
        let window = QueryWindow(offset: query.offset, limit: query.limit)
        if sorted { return QueryRows(window: window) }
        let keys = query.sort
        return QueryRows(window: window) { lhs, rhs in
            for key in keys {
                let order = QueryValueOrder.sortOrder(
                    QueryEvaluator.read(key.path, from: lhs.record), QueryEvaluator.read(key.path, from: rhs.record))
                if order == .orderedSame { continue }
                return (order == .orderedAscending) == key.ascending
            }
            return lhs.key.lexicographicallyPrecedes(rhs.key)
        }
    }

    /// Whether `query`'s predicate reads records of other entities through its entity's
    /// relationships (see the query language's "Through relationships"): such a query is
    /// followed live, but cannot resume after an earlier commit or be replayed.
    package func readsRelatedRecords(_ query: Query) throws -> Bool {
        guard let entity = try entity(named: query.entity) else { return false }
        return QueryRelationships(query.predicate, relationships: entity.relationships) != nil
    }

    /// A stored record read without its model type.
    ///
    /// - Throws: `RillError(.corruptStore)` naming the entity and identifier when the bytes are unreadable.
    ///
    /// - Parameter names: the key names of the records read before (see `RecordKeyNames`).
    package static func recordValue(
        _ bytes: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, entity: String, fields: Set<String>? = nil,
        names: RecordKeyNames? = nil
    ) throws -> RecordValue {
        do {
            if let fields { return try RecordValue(record: bytes, fields: fields) }
            return try RecordValue(record: bytes, names: names)
        } catch {
            let id = AnyIdentifier(storageKey: key).map { "\($0)" } ?? "?"
            throw RillError(.corruptStore, "the stored \(entity) \(id) is unreadable: \(error)", underlyingError: error)
        }
    }

    /// A human-readable plan of `query`: how records are found, what is evaluated on each, the order and window.
    package func explain(_ query: Query) throws -> String {
        let entity = try existingEntity(query.entity)
        try check(query, entity: entity)
        let count = try recordCount(of: entity)
        let relationships = QueryRelationships(query.predicate, relationships: entity.relationships)
        let plan = QueryExecution(
            store: self, entity: entity, predicate: relationships?.predicate ?? query.predicate,
            isExact: relationships == nil, sort: query.sort,
            limit: QueryWindow(offset: query.offset, limit: query.limit).end, transaction: nil,
            evolution: try evolution(of: query.entity)
        ).plan
        var lines: [String] = []
        lines += plan.describeAccess(entity: query.entity, recordCount: count, hasIndexes: !entity.indexes.isEmpty)
        if let predicate = query.predicate {
            lines.append("filter: \(predicate) — evaluated on each candidate record")
        }
        for read in relationships?.reads ?? [] {
            let relationship = read.relationship
            let how =
                relationship.kind == .inverse
                ? "the \(relationship.entity) records whose \(relationship.inverseOf ?? "") references it, "
                    + "from the reference index"
                : "the \(relationship.entity) record\(relationship.kind == .references ? "s" : "") it references"
            lines.append("reads \(query.entity).\(relationship.field) for each candidate: \(how) (no index serves it)")
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
