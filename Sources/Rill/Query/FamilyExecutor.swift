import Foundation

/// Runs a deep fetch of a family (``FamilyDescriptor``): finds the matching records of every
/// kind, decodes each as the kind its discriminator names, orders them and cuts the window.
///
/// As for a typed fetch (`QueryExecutor`), the predicate is translated as far as it can be
/// (with `is` and `as?` on the record as tests of its discriminator) and the translation plans
/// the read; a complete translation decides on each stored record, otherwise each decoded
/// model is tested by the predicate itself. The results are those of evaluating the predicate
/// on every model of the family.
struct FamilyExecutor<Base> {
    let store: Store
    /// Nil when the store has no records of the family yet.
    let entity: EntityStorage?
    let family: ModelFamily
    let descriptor: FamilyDescriptor<Base>
    /// The context's unsaved changes to the family's records: key → model, nil for a deletion.
    let staged: [[UInt8]: Base?]
    /// The read transaction to run in; nil for one of its own.
    var transaction: StoreSnapshot? = nil
    let predicate: FamilyPredicate<Base>
    private let decoders: FamilyDecoders<Base>

    init(
        store: Store, entity: EntityStorage?, family: ModelFamily, descriptor: FamilyDescriptor<Base>,
        staged: [[UInt8]: Base?], transaction: StoreSnapshot? = nil, predicate: FamilyPredicate<Base>? = nil
    ) {
        self.store = store
        self.entity = entity
        self.family = family
        self.descriptor = descriptor
        self.staged = staged
        self.transaction = transaction
        self.predicate = predicate ?? FamilyPredicate(descriptor.predicate, family: family)
        self.decoders = FamilyDecoders(family)
    }

    // MARK: - Running

    /// The models of the descriptor's window, in order.
    func models() throws -> [Base] { try rows().map(\.model) }

    /// The rows of the descriptor's window, in order, with their identifier keys.
    func rows() throws -> [(key: [UInt8], model: Base)] {
        let window = QueryWindow(offset: descriptor.fetchOffset, limit: descriptor.fetchLimit)
        if window.isEmpty { return [] }
        var rows = try matches(stoppingAt: descriptor.sortBy.isEmpty && staged.isEmpty ? window : nil)
        for (key, model) in staged {
            guard let model, try predicate.matches(model) else { continue }
            rows.append((key, model))
        }
        rows.sort(by: precedes)
        return Array(rows[window.range(in: rows.count)])
    }

    /// How many models `models()` would return.
    func count() throws -> Int {
        let total =
            try matches(stoppingAt: nil).count
            + staged.values.reduce(0) { count, model in try count + (model.map(predicate.matches) == true ? 1 : 0) }
        return QueryWindow(offset: descriptor.fetchOffset, limit: descriptor.fetchLimit).range(in: total).count
    }

    /// How the fetch runs, for a person.
    func explanation() throws -> String {
        guard let execution = try plan(sorted: false) else {
            return "no stored \(family.entityName) records: nothing to read"
        }
        var lines = execution.plan.describeAccess(
            entity: family.entityName, recordCount: try store.recordCount(of: execution.entity),
            hasIndexes: !execution.entity.indexes.isEmpty)
        if let translation = predicate.translation {
            if let node = translation.node { lines.append("translated: \(node)") }
            if !translation.untranslated.isEmpty {
                lines.append("not translated: \(translation.untranslated.joined(separator: "; "))")
            }
            lines.append(
                translation.isComplete
                    ? "filter: the translation, on each stored record before it is decoded"
                    : "residual: the whole predicate, evaluated in Swift on each decoded candidate")
        }
        lines.append("decoded: each record as the kind its `\(family.discriminator)` names")
        if !descriptor.sortBy.isEmpty { lines.append("order: sorted in memory, then identifier") }
        return lines.joined(separator: "\n")
    }

    /// Calls `body` with the key, stored bytes and model of each stored record that matches, in
    /// identifier order when `sorted` and the plan reads it so (then the return, and the body's
    /// last argument, are true); `body` returns false to stop.
    func forEachStoredMatch(
        sorted: Bool,
        _ body: (_ key: UnsafeRawBufferPointer, _ bytes: UnsafeRawBufferPointer, _ model: Base, _ isSorted: Bool)
            throws -> Bool
    ) throws -> Bool {
        let testsModels = predicate.exact == nil
        // A predicate evaluated on the models may look through their relationships: it is
        // evaluated on copies whose relationships are read in the fetch's snapshot.
        let readsRelationships = testsModels && decoders.hasRelationships && descriptor.predicate != nil
        if readsRelationships, transaction == nil {
            return try store.read { snapshot in
                var copy = self
                copy.transaction = snapshot
                return try copy.forEachStoredMatch(sorted: sorted, body)
            }
        }
        guard let execution = try plan(sorted: sorted) else { return true }
        let isSorted = execution.isSorted
        let loader = readsRelationships ? transaction.map { RelationshipLoader(store: store, snapshot: $0) } : nil
        try execution.forEachMatch { key, bytes in
            let model = try decoders.decode(bytes, key: key)
            if testsModels {
                let tested = try loader.map { try decoders.resolved(model, loader: $0) } ?? model
                guard try predicate.evaluate(tested) else { return true }
            }
            return try body(key, bytes, model, isSorted)
        }
        return isSorted
    }

    // MARK: - Internal

    /// The stored matches, less the staged ones; with `window`, only up to its end when the
    /// plan reads in identifier order.
    private func matches(stoppingAt window: QueryWindow?) throws -> [(key: [UInt8], model: Base)] {
        var rows: [(key: [UInt8], model: Base)] = []
        let hasStaged = !staged.isEmpty
        let end = window?.end
        _ = try forEachStoredMatch(sorted: end != nil) { key, _, model, isSorted in
            let key = Array(key)
            if hasStaged, staged[key] != nil { return true }
            rows.append((key, model))
            // Only a walk in identifier order may stop at the window's end.
            guard isSorted, let end else { return true }
            return rows.count < end
        }
        return rows
    }

    private func plan(sorted: Bool) throws -> QueryExecution? {
        guard let entity, let current = try store.entity(named: entity.name) else { return nil }
        return QueryExecution(
            store: store, entity: current, predicate: predicate.translation?.node, isExact: predicate.exact != nil,
            sort: sorted ? [] : nil, limit: sorted ? descriptor.fetchLimit : nil, transaction: transaction)
    }

    private func precedes(_ lhs: (key: [UInt8], model: Base), _ rhs: (key: [UInt8], model: Base)) -> Bool {
        for sort in descriptor.sortBy {
            switch sort.totalCompare(lhs.model, rhs.model) {
            case .orderedAscending: return true
            case .orderedDescending: return false
            case .orderedSame: continue
            }
        }
        return lhs.key.lexicographicallyPrecedes(rhs.key)
    }
}
