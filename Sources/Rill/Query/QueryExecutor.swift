import Foundation

/// Runs a fetch: finds the matching models, orders them and cuts the requested window.
///
/// The predicate is translated into Rill's query form as far as it can be (`PredicateTranslator`);
/// the planner uses that necessary condition to pick an index range, or a scan. Every candidate
/// is then decoded and the `Predicate` itself evaluated on it, so results are exactly those of
/// evaluating the predicate on every model, whatever was translated. When an index's order is the
/// sort's, the candidates come sorted and a limit stops the walk early.
@usableFromInline
struct QueryExecutor<T: PersistentModel> {
    @usableFromInline let store: Store
    /// Nil when the store has no records of `T` yet.
    @usableFromInline let entity: EntityStorage?
    @usableFromInline let descriptor: FetchDescriptor<T>
    /// The context's unsaved changes to `T`: identifier key → model, or nil for a deletion.
    @usableFromInline let staged: [[UInt8]: T?]
    /// The read transaction to run in; nil for one of its own.
    @usableFromInline var transaction: StoreSnapshot? = nil
    /// How the descriptor's predicate is decided.
    @usableFromInline let predicate: ModelPredicate<T>
    /// The relationships read, when any are; nil for a fetch that reads none, which names no
    /// array of a generic type (each looked its metadata up, unspecialized here).
    @usableFromInline let relationships: Relationships?
    /// Whether anything is read through relationships.
    private var readsRelationships: Bool { relationships != nil }

    /// The relationships a fetch reads.
    @usableFromInline
    final class Relationships {
        /// Those the predicate looks through: read on a copy of each candidate the predicate is
        /// evaluated on.
        let predicate: [ModelRelationship<T>]
        /// Those the descriptor prefetches: read on each model returned.
        let prefetched: [ModelRelationship<T>]

        init(predicate: [ModelRelationship<T>], prefetched: [ModelRelationship<T>]) {
            self.predicate = predicate
            self.prefetched = prefetched
        }
    }
    /// Reads them, in the fetch's snapshot; set while the fetch runs.
    @usableFromInline var loader: RelationshipLoader?

    /// A fetch of `descriptor`, its predicate decided as `ModelPredicate(of: descriptor)`.
    ///
    /// Both initializers are inlinable, as `ModelContext.fetch` and `ModelPredicate(of:)` are:
    /// code generic over the model is otherwise compiled once for every model type (a model is
    /// of another module), and each function of it looks up the metadata of the generic types
    /// it names and copies values through their value witnesses; inlined into the caller's
    /// module, it is compiled for the caller's model. (A one-row fetch spent about 1,700
    /// instructions on these functions' look-ups and copies.) `models()` is not: compiled for
    /// the caller's model it ran as many instructions (Performance.md, "A typed fetch's entry
    /// compiled for the caller's model").
    @inlinable
    init(
        store: Store, entity: EntityStorage?, descriptor: consuming FetchDescriptor<T>, staged: [[UInt8]: T?],
        transaction: StoreSnapshot? = nil
    ) {
        // The predicate first, so that the descriptor is moved into the executor, not copied (a
        // copy and a destroy of a descriptor each go through the value witnesses of `Predicate`).
        let predicate = ModelPredicate(of: descriptor)
        self.init(
            store: store, entity: entity, descriptor: descriptor, staged: staged, transaction: transaction,
            predicate: predicate)
    }

    /// A fetch of `descriptor` whose predicate is decided as `predicate` says (made once by a
    /// live query for all its fetches).
    @inlinable
    init(
        store: Store, entity: EntityStorage?, descriptor: consuming FetchDescriptor<T>, staged: [[UInt8]: T?],
        transaction: StoreSnapshot?, predicate: ModelPredicate<T>
    ) {
        self.store = store
        self.entity = entity
        self.staged = staged
        self.transaction = transaction
        self.predicate = predicate
        let fields = predicate.relationshipFields
        var prefetchedFields: Set<String> = []
        if StorageHeader.count(of: descriptor.relationshipKeyPathsForPrefetching) != 0 {
            for keyPath in descriptor.relationshipKeyPathsForPrefetching {
                if let name = FieldPath.components(of: keyPath, root: T.self)?.first { prefetchedFields.insert(name) }
            }
        }
        // The common case, nil, kept clear of the arrays of a generic type (unspecialized here).
        relationships =
            fields.isEmpty && prefetchedFields.isEmpty
            ? nil : Self.relationships(predicate: fields, prefetched: prefetchedFields)
        // Last, so that the descriptor is moved in.
        self.descriptor = descriptor
    }

    /// The relationships of `T` named by `fields` and `prefetchedFields`; nil when there are none.
    @usableFromInline
    static func relationships(
        predicate fields: Set<String>, prefetched prefetchedFields: Set<String>
    ) -> Relationships? {
        let all = T.relationships
        let predicate = all.filter { fields.contains($0.schema.field) }
        let prefetched = all.filter { prefetchedFields.contains($0.schema.field) }
        guard !predicate.isEmpty || !prefetched.isEmpty else { return nil }
        return Relationships(predicate: predicate, prefetched: prefetched)
    }

    /// Runs `body` with a loader of the relationships to read, in one snapshot with the fetch's
    /// reads; runs it as it is when there are none.
    private func resolving<R>(_ body: (QueryExecutor) throws -> R) throws -> R {
        guard readsRelationships, loader == nil else { return try body(self) }
        if let transaction {
            var copy = self
            copy.loader = RelationshipLoader.reading?.loader ?? RelationshipLoader(store: store, snapshot: transaction)
            return try body(copy)
        }
        return try store.read { snapshot in
            var copy = self
            copy.transaction = snapshot
            copy.loader = RelationshipLoader(store: store, snapshot: snapshot)
            return try body(copy)
        }
    }

    // MARK: - Running

    /// The models of the descriptor's window, in order.
    ///
    /// Inlinable, so that the array of the models the fetch reads in order (`OrderedModels`) is
    /// made in the caller's module, for its model type; finding them is not (see `init`).
    @inlinable
    func models() throws -> [T] {
        try models(moving: OrderedModels.array)
    }

    /// `models()`, the models read in order made an array by `move` (see `OrderedModels.results`).
    @usableFromInline
    func models(moving move: (UnsafeMutableRawPointer, Int) -> [T]) throws -> [T] {
        if readsRelationships, loader == nil { return try resolving { try $0.models(moving: move) } }
        let window = QueryWindow(offset: descriptor.fetchOffset, limit: descriptor.fetchLimit)
        if window.isEmpty { return [] }
        if let models = try exactRangeModels(window: window, moving: move) { return models }
        // Ascending sorts on strings may be served by an index too (`walkableSortKeys`), each
        // string checked as it is read.
        var textPaths: [[String]] = []
        var execution = try plan(sort: Self.walkableSortKeys(descriptor.sortBy, textPaths: &textPaths))
        // Candidates already in the wanted order, with no staged model to merge in: the window is
        // the first matches, and the walk can stop there. (The common case, kept free of the
        // rows' bookkeeping.)
        if execution?.isSorted ?? true, StorageHeader.isEmpty(staged) || !staged.values.contains(where: { $0 != nil }) {
            guard let sorted = execution else { return [] }
            var models = OrderedModels(of: T.self, window: window)
            let hasStaged = !StorageHeader.isEmpty(staged)
            let testsModels = self.testsModels
            let prefetches = readsRelationships
            let checksText = !textPaths.isEmpty
            var keyOrderFails = false
            var spare = SpareDecoder.take()
            defer { SpareDecoder.putBack(spare) }
            // Not `collect(into:)`, no optional model, the staged changes looked at in a
            // function of their own, and no method of `self` called for a row that needs none:
            // this code is not specialized for `T` (fetches are called from other modules), and
            // each generic type it uses (`T?`, `[[UInt8]: T?]`, `QueryExecutor<T>` for a
            // method's `self`) costs a lookup of the type for every row.
            try sorted.forEachMatch { key, bytes in
                // A staged deletion removes the stored model.
                if hasStaged, isStaged(key) { return true }
                let model = try T.decodeStored(from: bytes, key: key, reusing: &spare)
                guard try !testsModels || evaluate(model) else { return true }
                if checksText, try !Self.sortsInKeyOrder(bytes, key: key, textPaths: textPaths) {
                    keyOrderFails = true
                    return false
                }
                // Moved into the buffer, not copied (a copy of an unspecialized model is a call
                // through its value witnesses, and its retains).
                if prefetches { return models.add(try prefetching(model)) }
                return models.add(consume model)
            }
            guard keyOrderFails else { return models.results(T.self, moving: move) }
            // A match whose string Swift may order apart from its key: every match, sorted here.
            execution = try plan()
        }
        var rows = QueryRows<Row>(window: window, ordering: precedes)
        try collectRows(execution, into: &rows)
        // A closure, not `\.model`: a key path into a generic type is built anew on every call.
        return rows.results().map { $0.model }
    }

    /// The identifier keys of the models `models()` returns, in the same order. Where the plan
    /// reads the matches in the descriptor's order and no staged model is to be merged in, only
    /// the keys are kept (a model is decoded when the predicate must be evaluated on it, then
    /// dropped); otherwise the matches are sorted as `models()` sorts them.
    func identifierKeys() throws -> [[UInt8]] {
        if readsRelationships, loader == nil { return try resolving { try $0.identifierKeys() } }
        let window = QueryWindow(offset: descriptor.fetchOffset, limit: descriptor.fetchLimit)
        if window.isEmpty { return [] }
        let execution = try plan()
        if execution?.isSorted ?? true, StorageHeader.isEmpty(staged) || !staged.values.contains(where: { $0 != nil }) {
            guard let execution else { return [] }
            let hasStaged = !StorageHeader.isEmpty(staged)
            let testsModels = self.testsModels
            var keys: [[UInt8]] = []
            var skipped = 0
            var spare: RecordDecoder?
            try execution.forEachMatch { key, bytes in
                if hasStaged, isStaged(key) { return true }
                if testsModels {
                    guard try evaluate(T.decodeStored(from: bytes, key: key, reusing: &spare)) else { return true }
                }
                guard skipped == window.offset else {
                    skipped += 1
                    return true
                }
                keys.append(Array(key))
                return window.keepsMore(afterKeeping: keys.count)
            }
            return keys
        }
        var rows = QueryRows<Row>(window: window, ordering: precedes)
        try collectRows(execution, into: &rows)
        return rows.results().map { $0.key ?? $0.model.id.storageKey }
    }

    /// `models` with the relationships the descriptor prefetches read, in a snapshot of their own
    /// (for models read apart from a fetch: `ModelContext.enumerate`'s batches).
    func prefetched(_ models: [T]) throws -> [T] {
        guard let relationships, !relationships.prefetched.isEmpty, !models.isEmpty else { return models }
        if loader == nil { return try resolving { try $0.prefetched(models) } }
        return try models.map(prefetching)
    }

    /// Whether the decoded model of a stored candidate that passed the execution's filter must
    /// be tested by the `Predicate`: not when a complete translation decided already (or the
    /// index ranges are exactly the predicate, and every candidate matches).
    ///
    /// Read once per fetch, not per row: code generic over `T` (fetches are not specialized for
    /// the model types of other modules) looks up the layout of `self` at each read of its
    /// properties.
    private var testsModels: Bool { predicate.exact == nil }

    /// Calls `body` with the identifier key, stored bytes and model of each stored model that
    /// matches the predicate, in the order the plan reads them — the descriptor's sort when the
    /// returned value is true, and then only the first `limit` are read. The context's unsaved
    /// changes and the descriptor's window are not looked at. (For live queries, which keep more
    /// of a row than its model, and so read each record once.)
    ///
    /// The model is given as a function: when neither the predicate nor a prefetch needs it, the
    /// record is decoded only if `body` asks (a live query may share a row made already).
    func forEachStoredMatch(
        limit: Int?,
        _ body: (_ key: UnsafeRawBufferPointer, _ bytes: UnsafeRawBufferPointer, _ model: () throws -> T) throws ->
            Void
    ) throws -> Bool {
        if readsRelationships, loader == nil {
            return try resolving { try $0.forEachStoredMatch(limit: limit, body) }
        }
        guard let execution = try plan() else { return true }
        let window = QueryWindow(offset: nil, limit: execution.isSorted ? limit : nil)
        if window.isEmpty { return true }
        let testsModels = self.testsModels
        var count = 0
        let decodesFirst = testsModels || relationships?.prefetched.isEmpty == false
        var spare: RecordDecoder?
        try execution.forEachMatch { key, bytes in
            if decodesFirst {
                let model = try T.decodeStored(from: bytes, key: key, reusing: &spare)
                guard try !testsModels || evaluate(model) else { return true }
                let prefetched = try prefetching(model)
                try body(key, bytes) { prefetched }
            } else {
                try body(key, bytes) { try T.decodeStored(from: bytes, key: key, reusing: &spare) }
            }
            count += 1
            return window.keepsMore(afterKeeping: count)
        }
        return execution.isSorted
    }

    /// How many models `models()` would return.
    func count() throws -> Int {
        if readsRelationships, loader == nil { return try resolving { try $0.count() } }
        let total: Int
        if descriptor.predicate == nil, predicate.recordTest == nil, predicate.exact == nil, staged.isEmpty {
            total = try entity.map { try store.recordCount(of: $0) } ?? 0
        } else {
            // Counting reads every match whatever the order: a plan for the sort's order could
            // only read more (a walk of the sort's index chosen over a small range).
            let execution = try plan(ordered: false)
            if staged.isEmpty, let counted = try execution?.countWithoutReading() {
                // The index ranges are the predicate: count keys, decode nothing.
                total = counted
            } else {
                var rows = QueryRows<Row>(window: QueryWindow(offset: nil, limit: nil))
                try collectRows(execution, into: &rows, keepingKeys: false)
                total = rows.rows.count
            }
        }
        return QueryWindow(offset: descriptor.fetchOffset, limit: descriptor.fetchLimit).range(in: total).count
    }

    /// How the fetch runs, for a person.
    func explanation() throws -> String {
        var textPaths: [[String]] = []
        guard let execution = try plan(sort: Self.walkableSortKeys(descriptor.sortBy, textPaths: &textPaths)) else {
            return "no stored \(T.entityName) records: nothing to read"
        }
        let current = execution.entity
        var lines: [String] = []
        let count = try store.recordCount(of: current)
        lines += execution.plan.describeAccess(
            entity: T.entityName, recordCount: count, hasIndexes: !current.indexes.isEmpty)
        // Translated anew: a prepared translation keeps no descriptions of what it left out.
        if let translation = ModelPredicate(translating: descriptor.predicate).translation {
            if let node = translation.node { lines.append("translated: \(node)") }
            if !translation.untranslated.isEmpty {
                lines.append("not translated: \(translation.untranslated.joined(separator: "; "))")
            }
            if translation.isComplete {
                lines.append(
                    execution.coversPredicate
                        ? "filter: none, the index ranges are the predicate"
                        : "filter: the translation, on each stored record before it is decoded")
            } else {
                lines.append("residual: the whole predicate, evaluated in Swift on each decoded candidate")
            }
        }
        if !descriptor.sortBy.isEmpty {
            lines.append(
                execution.isSorted
                    ? "order: from the index, no sort needed" : "order: sorted in memory, then identifier")
            if execution.isSorted, !textPaths.isEmpty {
                let fields = textPaths.map { $0.joined(separator: ".") }.joined(separator: ", ")
                lines.append(
                    "strings (\(fields)) checked as read: a match with a scalar from U+0300 on sorts every match in memory"
                )
            }
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

    /// The execution over the stored records; nil when there are none. It counts as sorted only
    /// when the candidates come in the descriptor's order (identifier order when it has no sort).
    ///
    /// The translation plans; a complete one says exactly what the predicate says, with Rill's
    /// total semantics, and so decides on each stored record before the record is decoded (which
    /// rejects most of a scan's records for the cost of reading the fields it needs).
    ///
    /// Not `ordered`: a plan for the matches in any order (the descriptor's sort and window not
    /// looked at), to count them.
    private func plan(ordered: Bool = true) throws -> QueryExecution? {
        try plan(sort: ordered ? Self.orderPreservingSortKeys(descriptor.sortBy) : nil, ordered: ordered)
    }

    /// The execution for `sort`, the sort as field paths an index's order may serve (nil for a
    /// sort none can).
    private func plan(sort: [QuerySortKey]?, ordered: Bool = true) throws -> QueryExecution? {
        guard let entity, let current = try store.entity(named: entity.name) else { return nil }
        return QueryExecution(
            store: store, entity: current, predicate: predicate.translation?.node, isExact: predicate.exact != nil,
            sort: sort,
            limit: ordered ? QueryWindow(offset: descriptor.fetchOffset, limit: descriptor.fetchLimit).end : nil,
            transaction: transaction, required: predicate.recordTest, prepared: predicate.preparedPlan)
    }

    /// `sortBy` as field paths whose index-key order is the sort descriptors' order: key paths
    /// of stored properties, neither strings (Swift's `<` and the key order differ for some
    /// strings) nor decimals (keyed approximately); nil when some sort descriptor is not.
    static func orderPreservingSortKeys(_ sortBy: [SortDescriptor<T>]) -> [QuerySortKey]? {
        var textPaths: [[String]] = []
        return sortKeys(sortBy, allowingText: false, textPaths: &textPaths)
    }

    /// `sortBy` as field paths an index walk may serve in `models()`: those of
    /// `orderPreservingSortKeys`, and also ascending sorts of strings by Swift's `<` (the
    /// default comparator here, or `.lexical`), whose paths are added to `textPaths`.
    ///
    /// The index holds a string's NFC form, and for a string of scalars below U+0300 Swift's `<`
    /// is the order of those keys: with each other, and with every string whose key is greater.
    /// Where Swift departs from the NFC order, the other string's key is the smaller one (a
    /// singleton such as U+212B ANGSTROM SIGN, whose NFC is a prefix of the first: Swift calls
    /// neither of `"\u{212B}"` and `"Åb"` less than the other, or the second the smaller). An
    /// ascending walk reads such a partner before the string, so while every match it reads has
    /// only such strings (`sortsInKeyOrder`), its order is Swift's and it may stop at the window's
    /// end; a match with another string sends the fetch to the sort in memory. A descending walk
    /// would meet the partner after the window, unread: strings sorted in reverse stay in memory.
    static func walkableSortKeys(_ sortBy: [SortDescriptor<T>], textPaths: inout [[String]]) -> [QuerySortKey]? {
        sortKeys(sortBy, allowingText: true, textPaths: &textPaths)
    }

    /// `orderPreservingSortKeys`, and `allowingText`, also the ascending string sorts, their
    /// paths set in `textPaths` (left empty when the sort is not served).
    private static func sortKeys(
        _ sortBy: [SortDescriptor<T>], allowingText: Bool, textPaths: inout [[String]]
    ) -> [QuerySortKey]? {
        var keys: [QuerySortKey] = []
        guard StorageHeader.count(of: sortBy) != 0 else { return keys }
        // A field the evolution adds or renames sorts by the models, not by stored bytes.
        let evolved = T.evolvedFields
        var found: [[String]] = []
        for sort in sortBy {
            guard let keyPath = sort.keyPath, let path = FieldPath.components(of: keyPath, root: T.self)
            else { return nil }
            if let first = path.first, evolved.contains(first) { return nil }
            let valueType = type(of: keyPath).valueType
            if valueType == String.self || valueType == String?.self {
                // Swift's `<`, ascending, and only where the caller checks the strings.
                guard allowingText, sort.order == .forward,
                    sort.stringComparator == nil || sort.stringComparator == .lexical
                else { return nil }
                found.append(path)
            } else if !Self.storedOrderIsSwiftOrder(valueType) {
                // Foundation gives a string comparator only to sorts of `String` and `String?`
                // values, so these types need no call of its getter (about 600 instructions).
                return nil
            }
            keys.append(QuerySortKey(path: path, ascending: sort.order == .forward))
        }
        textPaths = found
        return keys
    }

    /// Whether values of `type` (or of its optional) sort by their `<` as their stored values
    /// sort: integers, floating-point numbers and dates. Any other type (an enum with raw values
    /// and a `<` of its own, a struct stored as one value, a decimal keyed approximately) is
    /// sorted by its own `<`, on the models.
    private static func storedOrderIsSwiftOrder(_ type: Any.Type) -> Bool {
        storedOrderTypes.contains(ObjectIdentifier(type))
    }

    /// Whether the stored record `bytes` (identifier key `key`) holds at each of `textPaths`
    /// nothing, null or a string of scalars below U+0300 only: a value an ascending index walk
    /// reads in Swift's order (see `walkableSortKeys`). Throws when the record is unreadable.
    private static func sortsInKeyOrder(
        _ bytes: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, textPaths: [[String]]
    ) throws -> Bool {
        let record = try Store.recordValue(
            bytes, key: key, entity: T.entityName, fields: Set(textPaths.compactMap(\.first)))
        for path in textPaths {
            switch QueryEvaluator.read(path, from: record) {
            case .null: continue
            case .string(let text): guard IndexKey.ordersAsSwift(text) else { return false }
            default: return false
            }
        }
        return true
    }

    // MARK: - Rows

    private struct Row {
        /// Present when the rows are sorted (their ties are ordered by it) or may be replaced by staged ones.
        var key: [UInt8]?
        var model: T
        /// The row's order key, when rows are sorted by them (see `collectRows`).
        var order: [UInt8]? = nil
    }

    /// Adds to `rows` the matching stored models (less staged deletions and replacements), then
    /// the matching staged models. Each row has its identifier key, unless `keepingKeys` is false
    /// (rows only counted).
    private func collectRows(
        _ execution: QueryExecution?, into rows: inout QueryRows<Row>, keepingKeys: Bool = true
    ) throws {
        if let execution {
            let hasStaged = !StorageHeader.isEmpty(staged)
            // Rows to be sorted, none of them a staged model (which has no stored bytes), are
            // given order keys from their stored bytes when the sort allows: one `memcmp` per
            // comparison instead of reading each model's properties through key paths.
            var orderKeys = keepingKeys && staged.isEmpty ? Self.orderPreservingSortKeys(descriptor.sortBy) : nil
            if orderKeys?.isEmpty == true { orderKeys = nil }
            let orderFields = orderKeys.map { Set($0.compactMap { $0.path.first }) }
            let testsModels = self.testsModels
            var spare: RecordDecoder?
            // Not `collect(into:)`: a row without an order key changes the rows kept so far.
            try execution.forEachMatch { key, bytes in
                // A staged change replaces or deletes the stored model.
                if hasStaged, isStaged(key) { return true }
                let model = try T.decodeStored(from: bytes, key: key, reusing: &spare)
                guard try !testsModels || evaluate(model) else { return true }
                var row = Row(key: keepingKeys ? Array(key) : nil, model: try prefetching(model))
                if let sort = orderKeys, let identifier = row.key {
                    let record = try Store.recordValue(bytes, key: key, entity: T.entityName, fields: orderFields)
                    row.order = try? OrderKey.make(record, key: identifier, sort: sort)
                    if row.order == nil {
                        // A value without an index key: every row is compared by its model.
                        orderKeys = nil
                        rows.updateEach { $0.order = nil }
                    }
                }
                return rows.add(row)
            }
        }
        for (key, model) in staged {
            guard let model, try matches(model) else { continue }
            _ = rows.add(Row(key: key, model: try prefetching(model)))
        }
    }

    private func matches(_ model: T) throws -> Bool {
        guard let loader, let relationships, !relationships.predicate.isEmpty else {
            return try predicate.matches(model)
        }
        var resolved = model
        for relationship in relationships.predicate { try relationship.resolve(&resolved, loader) }
        return try predicate.matches(resolved)
    }

    /// The predicate evaluated on `model`, with the relationships it looks through read.
    private func evaluate(_ model: T) throws -> Bool {
        guard let loader, let relationships, !relationships.predicate.isEmpty else {
            return try predicate.evaluate(model)
        }
        var resolved = model
        for relationship in relationships.predicate { try relationship.resolve(&resolved, loader) }
        return try predicate.evaluate(resolved)
    }

    /// `model` with the relationships the descriptor prefetches read.
    private func prefetching(_ model: T) throws -> T {
        guard let loader, let relationships, !relationships.prefetched.isEmpty else { return model }
        var resolved = model
        for relationship in relationships.prefetched { try relationship.resolve(&resolved, loader) }
        return resolved
    }

    /// Whether the context staged a change of the stored model with identifier key `key`.
    @inline(never)
    private func isStaged(_ key: UnsafeRawBufferPointer) -> Bool { staged[Array(key)] != nil }

    /// The descriptor's order: its sort descriptors, then the identifier key (rows carry keys).
    private func precedes(_ lhs: Row, _ rhs: Row) -> Bool {
        if let left = lhs.order, let right = rhs.order { return OrderKey.precedes(left, right) }
        for descriptor in descriptor.sortBy {
            switch descriptor.totalCompare(lhs.model, rhs.model) {
            case .orderedAscending: return true
            case .orderedDescending: return false
            case .orderedSame: continue
            }
        }
        return (lhs.key ?? lhs.model.id.storageKey).lexicographicallyPrecedes(rhs.key ?? rhs.model.id.storageKey)
    }
}

/// The value types whose `<` is the order of their stored values, and their optionals (see
/// `QueryExecutor.storedOrderIsSwiftOrder`).
private let storedOrderTypes: Set<ObjectIdentifier> = {
    let types: [Any.Type] = [
        Int.self, Int8.self, Int16.self, Int32.self, Int64.self, UInt.self, UInt8.self, UInt16.self, UInt32.self,
        UInt64.self, Double.self, Float.self, Date.self, Int?.self, Int8?.self, Int16?.self, Int32?.self, Int64?.self,
        UInt?.self, UInt8?.self, UInt16?.self, UInt32?.self, UInt64?.self, Double?.self, Float?.self, Date?.self,
    ]
    return Set(types.map { ObjectIdentifier($0) })
}()
