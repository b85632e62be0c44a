import Foundation

/// Runs a fetch: finds the matching models, orders them and cuts the requested window.
///
/// Today every fetch scans the entity's records in identifier order and evaluates the predicate
/// on each decoded model; the plan is the one place where index scans will replace that scan.
struct QueryExecutor<T: PersistentModel> {
    let store: Store
    /// Nil when the store has no records of `T` yet.
    let entity: EntityStorage?
    let descriptor: FetchDescriptor<T>
    /// The context's unsaved changes to `T`: identifier key → model, or nil for a deletion.
    let staged: [[UInt8]: T?]

    // MARK: - Running

    /// The models of the descriptor's window, in order.
    func models() throws -> [T] {
        let offset = max(descriptor.fetchOffset ?? 0, 0)
        let limit = descriptor.fetchLimit.map { max($0, 0) }
        if limit == 0 { return [] }
        // Scan order is identifier order; without a sort, and with no staged model to merge in,
        // the window is the first matches and the scan can stop there.
        let canStopEarly = descriptor.sortBy.isEmpty && !staged.values.contains { $0 != nil }
        let wanted = canStopEarly ? limit.map { offset + $0 } : nil
        var rows = try matchingRows(stopAfter: wanted)
        if !canStopEarly { try order(&rows) }
        let window = rows.dropFirst(offset).prefix(limit ?? .max)
        return window.map(\.model)
    }

    /// How many models match, ignoring the window's limit and offset... then applying them.
    func count() throws -> Int {
        let total: Int
        if descriptor.predicate == nil, staged.isEmpty {
            total = try entity.map { try store.recordCount(of: $0) } ?? 0
        } else {
            total = try matchingRows(stopAfter: nil).count
        }
        let afterOffset = max(total - max(descriptor.fetchOffset ?? 0, 0), 0)
        return min(afterOffset, descriptor.fetchLimit.map { max($0, 0) } ?? .max)
    }

    // MARK: - Rows

    private struct Row {
        /// Present when the row's identifier order must be known (staged rows, sort ties).
        var key: [UInt8]?
        var model: T
    }

    /// Matching stored models (less staged deletions and replacements) plus matching staged models.
    private func matchingRows(stopAfter wanted: Int?) throws -> [Row] {
        var rows: [Row] = []
        if let entity {
            let stagedKeys = staged
            try store.forEachRecord(of: entity) { key, bytes in
                if !stagedKeys.isEmpty, stagedKeys[Array(key)] != nil { return true }
                let model = try decode(bytes, key: key)
                if try matches(model) { rows.append(Row(key: nil, model: model)) }
                return wanted.map { rows.count < $0 } ?? true
            }
        }
        for (key, model) in staged {
            guard let model, try matches(model) else { continue }
            rows.append(Row(key: key, model: model))
        }
        return rows
    }

    private func matches(_ model: T) throws -> Bool {
        guard let predicate = descriptor.predicate else { return true }
        do {
            return try predicate.evaluate(model)
        } catch {
            throw RillError(
                .queryFailed, "the predicate failed on \(T.entityName) \(model.id): \(error)", underlyingError: error)
        }
    }

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
    private func order(_ rows: inout [Row]) throws {
        for index in rows.indices where rows[index].key == nil {
            rows[index].key = rows[index].model.id.storageKey
        }
        let sort = descriptor.sortBy
        rows.sort { lhs, rhs in
            for descriptor in sort {
                switch descriptor.compare(lhs.model, rhs.model) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
            return lhs.key!.lexicographicallyPrecedes(rhs.key!)
        }
    }
}
