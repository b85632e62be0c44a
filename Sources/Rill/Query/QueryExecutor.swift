import Foundation

/// Runs a fetch: finds the matching models, orders them and cuts the requested window.
///
/// The predicate is translated into Rill's query form as far as it can be (`PredicateTranslator`);
/// the planner uses that necessary condition to pick an index range, or a scan. Every candidate
/// is then decoded and the `Predicate` itself evaluated on it, so results are exactly those of
/// evaluating the predicate on every model, whatever was translated. When an index's order is the
/// sort's, the candidates come sorted and a limit stops the walk early.
struct QueryExecutor<T: PersistentModel> {
    let store: Store
    /// Nil when the store has no records of `T` yet.
    let entity: EntityStorage?
    let descriptor: FetchDescriptor<T>
    /// The context's unsaved changes to `T`: identifier key → model, or nil for a deletion.
    let staged: [[UInt8]: T?]
    /// The read transaction to run in; nil for one of its own.
    var transaction: StoreSnapshot? = nil
    /// How the descriptor's predicate is decided.
    let predicate: ModelPredicate<T>

    init(
        store: Store, entity: EntityStorage?, descriptor: FetchDescriptor<T>, staged: [[UInt8]: T?],
        transaction: StoreSnapshot? = nil, predicate: ModelPredicate<T>? = nil
    ) {
        self.store = store
        self.entity = entity
        self.descriptor = descriptor
        self.staged = staged
        self.transaction = transaction
        self.predicate = predicate ?? ModelPredicate(descriptor.predicate)
    }

    // MARK: - Running

    /// The models of the descriptor's window, in order.
    func models() throws -> [T] {
        let window = QueryWindow(offset: descriptor.fetchOffset, limit: descriptor.fetchLimit)
        if window.isEmpty { return [] }
        let planned = try plan()
        // Candidates already in the wanted order, with no staged model to merge in: the window is
        // the first matches, and the walk can stop there.
        let canStopEarly = (planned?.isSorted ?? true) && !staged.values.contains { $0 != nil }
        if canStopEarly, staged.isEmpty {
            guard let planned else { return [] }
            return try self.window(of: planned, offset: window.offset, limit: window.limit)
        }
        let wanted = canStopEarly ? window.end : nil
        // Otherwise, with a limit, keep only the best `offset + limit` rows while reading (a
        // bounded top-K), rather than sorting every match at the end.
        let best = canStopEarly ? nil : window.end.flatMap { $0 > 10_000 ? nil : $0 }
        var rows = try matchingRows(planned, stopAfter: wanted, keepBest: best)
        if !canStopEarly, best == nil { order(&rows) }
        // A closure, not `\.model`: a key path into a generic type is built anew on every call.
        return rows[window.range(in: rows.count)].map { $0.model }
    }

    /// The models of the window when the candidates come in order and no unsaved change of the
    /// context is merged in: the matches are the results as they come, and the walk stops at the
    /// end of the window. (The common case, kept free of the rows' bookkeeping.)
    private func window(of planned: Planned, offset: Int, limit: Int?) throws -> [T] {
        var models: [T] = []
        var skipped = 0
        try forEachMatch(of: planned) { _, _, model in
            if skipped < offset {
                skipped += 1
                return true
            }
            models.append(model)
            return limit.map { models.count < $0 } ?? true
        }
        return models
    }

    /// Calls `body` with the identifier key, stored bytes and model of each stored candidate of
    /// `planned` that matches the predicate, in the plan's order; `body` returns false to stop.
    private func forEachMatch(
        of planned: Planned,
        _ body: (_ key: UnsafeRawBufferPointer, _ bytes: UnsafeRawBufferPointer, _ model: T) throws -> Bool
    ) throws {
        // Only the fields the filter reads are parsed to evaluate it.
        let filterFields = planned.prefilter?.topLevelFields
        try store.forEachCandidate(of: planned.plan, in: planned.entity, transaction: transaction) { key, bytes in
            if let prefilter = planned.prefilter {
                let record = try Store.recordValue(bytes, key: key, entity: T.entityName, fields: filterFields)
                if !QueryEvaluator.matches(prefilter, record) { return true }
            }
            let model = try decode(bytes, key: key)
            // A complete translation decided already; when the index ranges are exactly the
            // predicate, every candidate matches.
            guard try planned.prefilter != nil || planned.coversPredicate || predicate.evaluate(model) else {
                return true
            }
            return try body(key, bytes, model)
        }
    }

    /// Calls `body` with the identifier key, stored bytes and model of each stored model that
    /// matches the predicate, in the order the plan reads them — the descriptor's sort when the
    /// returned value is true, and then only the first `limit` are read. The context's unsaved
    /// changes and the descriptor's window are not looked at. (For live queries, which keep more
    /// of a row than its model, and so read each record once.)
    func forEachStoredMatch(
        limit: Int?,
        _ body: (_ key: UnsafeRawBufferPointer, _ bytes: UnsafeRawBufferPointer, _ model: T) throws -> Void
    ) throws -> Bool {
        guard let planned = try plan() else { return true }
        let stopAfter = planned.isSorted ? limit : nil
        if stopAfter == 0 { return true }
        var count = 0
        try forEachMatch(of: planned) { key, bytes, model in
            try body(key, bytes, model)
            count += 1
            return stopAfter.map { count < $0 } ?? true
        }
        return planned.isSorted
    }

    /// How many models `models()` would return.
    func count() throws -> Int {
        let total: Int
        if descriptor.predicate == nil, staged.isEmpty {
            total = try entity.map { try store.recordCount(of: $0) } ?? 0
        } else {
            let planned = try plan()
            if staged.isEmpty, let planned, planned.coversPredicate,
                case .ranges(let index, let ranges, _) = planned.plan.access
            {
                // The index ranges are the predicate: count keys, decode nothing.
                total = try store.countKeys(of: index, in: ranges)
            } else {
                total = try matchingRows(planned, stopAfter: nil).count
            }
        }
        return QueryWindow(offset: descriptor.fetchOffset, limit: descriptor.fetchLimit).range(in: total).count
    }

    /// How the fetch runs, for a person.
    func explanation() throws -> String {
        guard let planned = try plan() else {
            return "no stored \(T.entityName) records: nothing to read"
        }
        let current = planned.entity
        var lines: [String] = []
        let count = try store.recordCount(of: current)
        lines += planned.plan.describeAccess(
            entity: T.entityName, recordCount: count, hasIndexes: !current.indexes.isEmpty)
        if let translation = predicate.translation {
            if let node = translation.node { lines.append("translated: \(node)") }
            if !translation.untranslated.isEmpty {
                lines.append("not translated: \(translation.untranslated.joined(separator: "; "))")
            }
            if translation.isComplete {
                lines.append(
                    planned.coversPredicate
                        ? "filter: none, the index ranges are the predicate"
                        : "filter: the translation, on each stored record before it is decoded")
            } else {
                lines.append("residual: the whole predicate, evaluated in Swift on each decoded candidate")
            }
        }
        if !descriptor.sortBy.isEmpty {
            lines.append(
                planned.isSorted ? "order: from the index, no sort needed" : "order: sorted in memory, then identifier")
        }
        if descriptor.fetchLimit != nil || descriptor.fetchOffset != nil {
            lines.append(
                "window: offset \(descriptor.fetchOffset ?? 0), limit \(descriptor.fetchLimit.map(String.init) ?? "none")"
            )
        }
        if !staged.isEmpty {
            lines.append("merges \(staged.count) unsaved change\(staged.count == 1 ? "" : "s") of this context")
        }
        return lines.joined(separator: "\n")
    }

    // MARK: - Planning

    /// The plan for the stored records; nil when there are none. `isSorted` is true only when the
    /// candidates come in the descriptor's order (identifier order when it has no sort).
    private func plan() throws -> Planned? {
        guard let entity, let current = try store.entity(named: entity.name) else { return nil }
        let translation = predicate.translation
        let sortKeys = indexableSortKeys()
        var plan = QueryPlanner.plan(
            translation?.node, sort: sortKeys ?? [], limit: descriptor.fetchLimit, entity: current)
        if !descriptor.sortBy.isEmpty, sortKeys == nil { plan.isSorted = false }
        // A complete translation says exactly what the predicate says, with Rill's total
        // semantics: it decides on each stored record, before the record is decoded (which
        // rejects most of a scan's records for the cost of reading the fields it needs). Index
        // ranges that are exactly the predicate need no test at all.
        var filter = predicate.exact
        let covers = filter != nil && plan.coversPredicate
        if covers { filter = nil }
        return Planned(plan: plan, entity: current, prefilter: filter, coversPredicate: covers)
    }

    /// A plan with what executing it needs.
    private struct Planned {
        var plan: QueryPlan
        /// The entity as the store describes it now (with all its indexes).
        var entity: EntityStorage
        /// The predicate's complete translation, deciding on each record before it is decoded
        /// (nil when the predicate is evaluated on the decoded model, or needs no test).
        var prefilter: QueryNode?
        /// The predicate translated completely, and expressed exactly by the plan's index ranges.
        var coversPredicate: Bool

        var isSorted: Bool { plan.isSorted }
    }

    /// The sort as field paths, when an index's order can serve it.
    private func indexableSortKeys() -> [QuerySortKey]? { Self.orderPreservingSortKeys(descriptor.sortBy) }

    /// `sortBy` as field paths whose index-key order is the sort descriptors' order: key paths
    /// of stored properties, neither strings (Swift's `<` and the key order differ for some
    /// strings) nor decimals (keyed approximately); nil when some sort descriptor is not.
    static func orderPreservingSortKeys(_ sortBy: [SortDescriptor<T>]) -> [QuerySortKey]? {
        var keys: [QuerySortKey] = []
        for sort in sortBy {
            guard let keyPath = sort.keyPath, sort.stringComparator == nil,
                let path = FieldPath.components(of: keyPath, root: T.self)
            else { return nil }
            let valueType = type(of: keyPath).valueType
            if valueType == String.self || valueType == String?.self || valueType == Decimal.self
                || valueType == Decimal?.self
            {
                return nil
            }
            keys.append(QuerySortKey(path: path, ascending: sort.order == .forward))
        }
        return keys
    }

    // MARK: - Rows

    private struct Row {
        /// Present when the row's identifier order must be known (staged rows, sort ties).
        var key: [UInt8]?
        var model: T
        /// The row's order key, when rows are sorted by them (see `matchingRows`).
        var order: [UInt8]? = nil
    }

    /// Matching stored models (less staged deletions and replacements) plus matching staged models.
    private func matchingRows(_ planned: Planned?, stopAfter wanted: Int?, keepBest: Int? = nil) throws -> [Row] {
        var rows: [Row] = []
        func add(_ row: Row) {
            if let keepBest { insert(row, into: &rows, keepingBest: keepBest) } else { rows.append(row) }
        }
        if let planned {
            let stagedKeys = staged
            let keepKeys = !planned.isSorted || keepBest != nil
            // Rows to be sorted, none of them a staged model (which has no stored bytes), are
            // given order keys from their stored bytes when the sort allows: one `memcmp` per
            // comparison instead of reading each model's properties through key paths.
            var orderKeys = keepKeys && staged.isEmpty ? Self.orderPreservingSortKeys(descriptor.sortBy) : nil
            if orderKeys?.isEmpty == true { orderKeys = nil }
            let orderFields = orderKeys.map { Set($0.compactMap { $0.path.first }) }
            try forEachMatch(of: planned) { key, bytes, model in
                // A staged change replaces or deletes the stored model.
                if !stagedKeys.isEmpty, stagedKeys[Array(key)] != nil { return true }
                var row = Row(key: keepKeys ? Array(key) : nil, model: model)
                if let sort = orderKeys, let identifier = row.key {
                    let record = try Store.recordValue(bytes, key: key, entity: T.entityName, fields: orderFields)
                    row.order = try? OrderKey.make(record, key: identifier, sort: sort)
                    if row.order == nil {
                        // A value without an index key: every row is compared by its model.
                        orderKeys = nil
                        for index in rows.indices { rows[index].order = nil }
                    }
                }
                add(row)
                return wanted.map { rows.count < $0 } ?? true
            }
        }
        for (key, model) in staged {
            guard let model, try matches(model) else { continue }
            add(Row(key: key, model: model))
        }
        return rows
    }

    /// Inserts `row` into `rows` (sorted, at most `capacity` long) where it belongs, dropping the
    /// row that falls off the end.
    private func insert(_ row: Row, into rows: inout [Row], keepingBest capacity: Int) {
        if rows.count == capacity, let last = rows.last, !precedes(row, last) { return }
        var low = 0
        var high = rows.count
        while low < high {
            let middle = (low + high) / 2
            if precedes(row, rows[middle]) { high = middle } else { low = middle + 1 }
        }
        rows.insert(row, at: low)
        if rows.count > capacity { rows.removeLast() }
    }

    private func matches(_ model: T) throws -> Bool { try predicate.matches(model) }

    private func decode(_ bytes: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer) throws -> T {
        do {
            return try RecordCoder.decode(T.self, from: bytes)
        } catch {
            let id = AnyIdentifier(storageKey: key).map { "\($0)" } ?? "?"
            throw RillError(
                .decodingFailed,
                "the stored \(T.entityName) \(id) does not decode as \(T.self): \(ModelContext.describe(error))",
                underlyingError: error)
        }
    }

    /// Sorts by the descriptor's sort, then by identifier.
    private func order(_ rows: inout [Row]) {
        for index in rows.indices where rows[index].key == nil {
            rows[index].key = rows[index].model.id.storageKey
        }
        rows.sort(by: precedes)
    }

    /// The descriptor's order: its sort descriptors, then the identifier key (rows carry keys).
    private func precedes(_ lhs: Row, _ rhs: Row) -> Bool {
        if let left = lhs.order, let right = rhs.order { return OrderKey.precedes(left, right) }
        for descriptor in descriptor.sortBy {
            switch descriptor.compare(lhs.model, rhs.model) {
            case .orderedAscending: return true
            case .orderedDescending: return false
            case .orderedSame: continue
            }
        }
        return (lhs.key ?? lhs.model.id.storageKey).lexicographicallyPrecedes(rhs.key ?? rhs.model.id.storageKey)
    }
}
