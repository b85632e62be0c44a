import Foundation

extension ModelContext {
    // MARK: - Enumerating

    /// Calls `block` with each model `fetch(descriptor)` would return, in the same order, reading
    /// the models `batchSize` at a time, so that a pass over many models does not hold them all.
    ///
    /// For example:
    ///
    /// ```swift
    /// var total = 0.0
    /// try context.enumerate(FetchDescriptor<Order>(predicate: #Predicate { $0.isPaid })) { order in
    ///     total += order.amount
    /// }
    /// ```
    ///
    /// The identifiers of the matches are read first, in one snapshot of the store; each batch
    /// of models is then read in a snapshot of its own, each model as it is when its batch is
    /// read (with the relationships the descriptor prefetches). A model deleted in between is
    /// left out; one changed in between is given as it is now (it may no longer match). No read
    /// transaction is held while `block` runs.
    ///
    /// With the descriptor's ``FetchDescriptor/includePendingChanges`` (the default), each batch
    /// also sees the changes the context has staged by then: a model the block deletes before
    /// its turn is left out, and one it replaces is given as staged. Changes the block stages
    /// stay staged until the context saves or rolls back (Rill discards nothing between batches,
    /// so `allowEscapingMutations`, which SwiftData uses to keep such changes, changes nothing).
    ///
    /// - Parameters:
    ///   - descriptor: which models, in what order, and which window of them.
    ///   - batchSize: how many models are read at a time; a value below one reads one at a time.
    ///   - allowEscapingMutations: accepted for SwiftData's callers; see above.
    ///   - block: called with each model in turn; an error it throws ends the enumeration and is
    ///     rethrown.
    /// - Throws: what `fetch(descriptor)` throws, and what `block` throws.
    public func enumerate<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, batchSize: Int = 5_000, allowEscapingMutations: Bool = false,
        block: (T) throws -> Void
    ) throws {
        let includesPending = descriptor.includePendingChanges
        let executor = try executor(for: descriptor)
        let keys = try executor.identifierKeys()
        let size = max(batchSize, 1)
        var start = 0
        while start < keys.count {
            let end = keys.count - start > size ? start + size : keys.count
            let models = try executor.prefetched(
                self.models(T.self, keys: keys[start..<end], includingPending: includesPending))
            start = end
            for model in models { try block(model) }
        }
    }

    /// The models of identifier keys `keys` that exist, in the order of `keys`, read in one
    /// snapshot; with `includingPending`, the context's staged changes replace or delete them.
    private func models<T: PersistentModel>(
        _ type: T.Type, keys: ArraySlice<[UInt8]>, includingPending: Bool
    ) throws -> [T] {
        let entity = try entity(for: T.self)
        var decoder: RecordDecoder?
        return try store.read { snapshot in
            var models: [T] = []
            models.reserveCapacity(keys.count)
            for key in keys {
                if includingPending, let staged = stagedChange(of: T.self, key: key) {
                    if let staged { models.append(staged) }
                    continue
                }
                guard let entity, let bytes = try snapshot.record(of: entity, key: key) else { continue }
                let model = try key.withUnsafeBytes { key in
                    try Self.storedModel(T.self, bytes, key: key, reusing: &decoder)
                }
                if let model { models.append(model) }
            }
            return models
        }
    }
}
