import Foundation
import RillStorage

/// A row of a live query's results: a model and its identifier's storage key.
struct LiveRow<T: PersistentModel>: Sendable {
    var key: [UInt8]
    var model: T
}

/// A live query as the follower maintains it: the first rows of its matches, in order, kept
/// exact commit by commit without running the query again.
///
/// It holds the rows up to the end of the descriptor's window plus some look-ahead (all matches
/// when there is no limit). A change to a record finds the record's old and new positions by
/// binary search; a deletion inside the window takes the next held row, and only when the
/// look-ahead runs out are rows read from the store again (an amortized cost). The change to the
/// window is worked out from the changed records and the rows near the window's edges, so a
/// commit costs a query work in proportion to the records it changed, not to the results.
///
/// Owned by the follower's thread.
final class MaintainedQuery<T: PersistentModel> {
    private(set) var descriptor: FetchDescriptor<T>
    /// The predicate's exact translation (it rejects records before they are decoded), when complete.
    private var filter: QueryNode?
    /// The top-level fields the predicate and sort read; nil when not known (every field).
    private var dependencies: Set<String>?
    /// The first `rows.count` matches, in order.
    private(set) var rows = ChunkedList<LiveRow<T>>()
    /// The held rows' models by identifier key.
    private var held: [[UInt8]: T] = [:]
    /// True when `rows` holds every match.
    private var complete = true

    init(descriptor: FetchDescriptor<T>) {
        self.descriptor = descriptor
        configure()
    }

    private func configure() {
        filter = nil
        var fields: Set<String>? = []
        if let predicate = descriptor.predicate {
            let translation = PredicateTranslator.translate(predicate)
            if translation.isComplete, let node = translation.node {
                filter = node
                if let used = node.topLevelFields { fields?.formUnion(used) } else { fields = nil }
            } else {
                fields = nil
            }
        }
        for sort in descriptor.sortBy {
            guard let keyPath = sort.keyPath, let path = FieldPath.components(of: keyPath, root: T.self),
                let first = path.first
            else {
                fields = nil
                break
            }
            fields?.insert(first)
        }
        dependencies = fields
    }

    // MARK: - The window

    /// The offset of the window's first row among the matches.
    var windowStart: Int { max(descriptor.fetchOffset ?? 0, 0) }

    /// The offset just past the window; nil without a limit.
    var windowEnd: Int? {
        descriptor.fetchLimit.map { limit in
            let (end, overflow) = windowStart.addingReportingOverflow(max(limit, 0))
            return overflow ? Int.max / 4 : end
        }
    }

    /// How many rows past the window are kept, so that deletions rarely need the store.
    private var lookahead: Int { windowEnd.map { max(16, $0 / 4) } ?? 0 }

    /// The results: the window's rows.
    var results: LiveResults<T> {
        let start = min(windowStart, rows.count)
        let end = min(windowEnd ?? rows.count, rows.count)
        return LiveResults(rows: rows, range: start..<end)
    }

    // MARK: - Loading

    /// Reads the first rows from the store as of the transaction's snapshot.
    func load(in transaction: ReadTransaction, store: Store) throws {
        let target = windowEnd.map { $0 + lookahead }
        let loaded = try fetch(limit: target, in: transaction, store: store)
        complete = target.map { loaded.count < $0 } ?? true
        replaceRows(with: loaded)
    }

    /// Replaces the descriptor and loads the new results; returns the change from the old
    /// window to the new one (nil when they are the same).
    func replaceDescriptor(
        _ newDescriptor: FetchDescriptor<T>, sequence: UInt64, in transaction: ReadTransaction, store: Store
    ) throws -> ResultsChange<T>? {
        let before = Array(results)
        let beforeKeys = results.keys
        descriptor = newDescriptor
        configure()
        try load(in: transaction, store: store)
        let change = ResultsDiff.between(
            old: beforeKeys, oldModels: before, new: results.keys, newModels: Array(results), sequence: sequence)
        return change.isEmpty ? nil : change
    }

    private func replaceRows(with loaded: [LiveRow<T>]) {
        rows = ChunkedList(loaded)
        held.removeAll(keepingCapacity: true)
        for row in loaded { held[row.key] = row.model }
    }

    /// The first `limit` matches as of the transaction's snapshot.
    private func fetch(limit: Int?, in transaction: ReadTransaction, store: Store) throws -> [LiveRow<T>] {
        guard let entity = try store.entity(named: T.entityName) else { return [] }
        var descriptor = self.descriptor
        descriptor.fetchOffset = nil
        descriptor.fetchLimit = limit
        let executor = QueryExecutor(
            store: store, entity: entity, descriptor: descriptor, staged: [:], transaction: transaction)
        return try executor.models().map { LiveRow(key: $0.id.storageKey, model: $0) }
    }

    // MARK: - Applying a commit

    /// Applies the changes one commit made to `T`'s records; returns the change to the results,
    /// or nil when they are as they were.
    func apply(_ changes: [DecodedChange], commit: CommitContext) throws -> ResultsChange<T>? {
        // The changes that can affect the held rows: a held record changed or deleted, or a
        // record that matches now. A record that is not held and whose changed fields are none
        // that the query reads stays out, undecoded.
        var relevant: [(key: [UInt8], model: T?)] = []
        for decoded in changes {
            let change = decoded.change
            let wasHeld = held[change.key] != nil
            switch change.kind {
            case .delete:
                if wasHeld { relevant.append((change.key, nil)) }
            case .update, .insert:
                if !wasHeld, change.kind == .update, let dependencies,
                    !change.changedFields.contains(where: dependencies.contains)
                {
                    continue
                }
                let model = try matchingModel(decoded)
                if model == nil, !wasHeld { continue }
                relevant.append((change.key, model))
            }
        }
        guard !relevant.isEmpty else { return nil }

        let before = rows
        var oldModels: [[UInt8]: T] = [:]
        for (key, model) in relevant {
            if let old = held.removeValue(forKey: key) {
                if oldModels[key] == nil { oldModels[key] = old }
                if let position = position(of: key, model: old, in: rows) { rows.remove(at: position) }
            }
            if let model {
                let row = LiveRow(key: key, model: model)
                if complete || (rows.last.map { precedes(row, $0) } ?? false) {
                    rows.insert(row, at: rows.partitionPoint { precedes($0, row) })
                    held[key] = model
                }
            }
        }
        if !complete, let end = windowEnd, rows.count < end {
            try refill(to: end + lookahead, commit: commit)
        } else if let end = windowEnd, rows.count > end + 2 * lookahead {
            let keep = end + lookahead
            for position in keep..<rows.count { held[rows[position].key] = nil }
            rows.truncate(to: keep)
            complete = false
        }
        let change = windowChange(
            from: before, touched: relevant.map(\.key), oldModels: oldModels, sequence: commit.sequence)
        return change.isEmpty ? nil : change
    }

    /// The model of a changed record when it matches the predicate, else nil.
    private func matchingModel(_ decoded: DecodedChange) throws -> T? {
        if let filter {
            guard let value = try decoded.recordValue(), QueryEvaluator.matches(filter, value) else { return nil }
        }
        guard let model = try decoded.model(T.self) else { return nil }
        return try matches(model) ? model : nil
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

    /// Reads the first `target` matches as of the current commit, when the held rows ran short.
    ///
    /// The transaction sees the batch's last commit, which may be later than the current one:
    /// rows of records that later commits changed are taken out of what the store gives, and put
    /// back as they were at the current commit.
    private func refill(to target: Int, commit: CommitContext) throws {
        let later = commit.keysChangedLater(in: T.entityName)
        let wanted = target + later.count
        var loaded = try fetch(limit: wanted, in: commit.transaction, store: commit.store)
        let reachedEnd = loaded.count < wanted
        if !later.isEmpty {
            loaded.removeAll { later.contains($0.key) }
            for key in later {
                guard let record = try commit.record(of: T.entityName, key: key) else { continue }
                let model = try LiveDecoding.decode(T.self, record, key: key)
                if try matches(model) { loaded.append(LiveRow(key: key, model: model)) }
            }
            loaded.sort(by: precedes)
        }
        complete = reachedEnd && loaded.count <= target
        replaceRows(with: Array(loaded.prefix(target)))
    }

    // MARK: - Order

    /// The descriptor's order: its sort descriptors, then the identifier key.
    func precedes(_ lhs: LiveRow<T>, _ rhs: LiveRow<T>) -> Bool {
        for sort in descriptor.sortBy {
            switch sort.compare(lhs.model, rhs.model) {
            case .orderedAscending: return true
            case .orderedDescending: return false
            case .orderedSame: continue
            }
        }
        return lhs.key.lexicographicallyPrecedes(rhs.key)
    }

    /// The position of the row with `key` (whose model, there, is `model`) in `list`, or nil.
    private func position(of key: [UInt8], model: T, in list: ChunkedList<LiveRow<T>>) -> Int? {
        let probe = LiveRow(key: key, model: model)
        let position = list.partitionPoint { precedes($0, probe) }
        return position < list.count && list[position].key == key ? position : nil
    }

    // MARK: - The change to the window

    /// A row that may have entered, left or moved within the window.
    private struct Candidate {
        var oldOffset: Int?
        var newOffset: Int?
        var oldModel: T?
        var newModel: T?
        var touched: Bool
    }

    /// The change from the window of `before` to the window of `rows`, given the keys of the
    /// rows the commit touched and their models before it (for those that were held).
    ///
    /// A row the commit did not touch keeps its place relative to other such rows, and shifts by
    /// at most `touched.count` positions, so only the touched rows and the rows that many
    /// positions from either edge of the old and new windows can enter, leave or move.
    private func windowChange(
        from before: ChunkedList<LiveRow<T>>, touched: [[UInt8]], oldModels: [[UInt8]: T], sequence: UInt64
    ) -> ResultsChange<T> {
        let start = windowStart
        let end = windowEnd
        let band = touched.count + 1
        let touchedSet = Set(touched)

        var candidates: [[UInt8]: Candidate] = [:]
        func offsetInWindow(_ position: Int?) -> Int? {
            guard let position, position >= start, position < (end ?? .max) else { return nil }
            return position - start
        }
        // Rows near the edges of both windows.
        func edgePositions(count: Int) -> [Int] {
            let windowEnd = min(end ?? count, count)
            guard start < windowEnd else { return [] }
            var positions = Array(start..<min(start + band, windowEnd))
            if end != nil {
                positions += Array(max(windowEnd - band, positions.last.map { $0 + 1 } ?? start)..<windowEnd)
            }
            return positions
        }
        for position in edgePositions(count: before.count) where !touchedSet.contains(before[position].key) {
            let row = before[position]
            let newPosition = self.position(of: row.key, model: row.model, in: rows)
            candidates[row.key] = Candidate(
                oldOffset: position - start, newOffset: offsetInWindow(newPosition), oldModel: row.model,
                newModel: newPosition.map { rows[$0].model }, touched: false)
        }
        for position in edgePositions(count: rows.count) where !touchedSet.contains(rows[position].key) {
            let row = rows[position]
            guard candidates[row.key] == nil else { continue }
            let oldPosition = self.position(of: row.key, model: row.model, in: before)
            candidates[row.key] = Candidate(
                oldOffset: offsetInWindow(oldPosition), newOffset: position - start,
                oldModel: oldPosition.map { before[$0].model }, newModel: row.model, touched: false)
        }
        for key in touchedSet {
            let oldModel = oldModels[key]
            let newModel = held[key]
            let oldPosition = oldModel.flatMap { position(of: key, model: $0, in: before) }
            let newPosition = newModel.flatMap { position(of: key, model: $0, in: rows) }
            candidates[key] = Candidate(
                oldOffset: offsetInWindow(oldPosition), newOffset: offsetInWindow(newPosition),
                oldModel: oldModel, newModel: newModel, touched: true)
        }

        var change = ResultsChange<T>(sequence: sequence, removals: [], insertions: [], moves: [], updates: [])
        // Rows in the old window that are not untouched rows of both windows, and the same in
        // the new one: every other row keeps its order, so a touched row of both windows stays
        // in place when as many stable rows precede it in each.
        var oldUnstable: [Int] = []
        var newUnstable: [Int] = []
        var common: [(key: [UInt8], candidate: Candidate)] = []
        for (key, candidate) in candidates {
            switch (candidate.oldOffset, candidate.newOffset) {
            case (let old?, nil):
                change.removals.append(.init(offset: old, element: candidate.oldModel!))
                oldUnstable.append(old)
            case (nil, let new?):
                change.insertions.append(.init(offset: new, element: candidate.newModel!))
                newUnstable.append(new)
            case (let old?, let new?) where candidate.touched:
                common.append((key, candidate))
                oldUnstable.append(old)
                newUnstable.append(new)
            default:
                break
            }
        }
        oldUnstable.sort()
        newUnstable.sort()
        func stableBefore(_ offset: Int, _ unstable: [Int]) -> Int {
            var low = 0
            var high = unstable.count
            while low < high {
                let middle = (low + high) / 2
                if unstable[middle] < offset { low = middle + 1 } else { high = middle }
            }
            return offset - low
        }
        var inPlace: [(old: Int, new: Int, model: T)] = []
        for (_, candidate) in common {
            let old = candidate.oldOffset!
            let new = candidate.newOffset!
            if stableBefore(old, oldUnstable) == stableBefore(new, newUnstable) {
                inPlace.append((old, new, candidate.newModel!))
            } else {
                change.moves.append(.init(from: old, to: new, element: candidate.newModel!))
            }
        }
        // Touched rows in the same gap between stable rows may have swapped: keep the longest
        // run in order in place, and move the others.
        inPlace.sort { $0.old < $1.old }
        let keep = ResultsDiff.longestIncreasingSubsequence(inPlace.map(\.new))
        for (index, row) in inPlace.enumerated() {
            if keep.contains(index) {
                change.updates.append(.init(oldOffset: row.old, offset: row.new, element: row.model))
            } else {
                change.moves.append(.init(from: row.old, to: row.new, element: row.model))
            }
        }
        change.removals.sort { $0.offset < $1.offset }
        change.insertions.sort { $0.offset < $1.offset }
        change.moves.sort { $0.to < $1.to }
        change.updates.sort { $0.offset < $1.offset }
        return change
    }
}

extension QueryNode {
    /// The first component of every field path the node reads; nil when it reads the whole record.
    var topLevelFields: Set<String>? {
        var fields: Set<String> = []
        var readsAll = false
        func visit(_ node: QueryNode) {
            switch node {
            case .field(let path):
                if let first = path.first { fields.insert(first) } else { readsAll = true }
            case .element, .literal: break
            case .compare(_, let lhs, let rhs), .string(_, let lhs, let rhs, _), .arithmetic(_, let lhs, let rhs),
                .coalesce(let lhs, let rhs):
                visit(lhs)
                visit(rhs)
            case .and(let operands), .or(let operands): operands.forEach(visit)
            case .not(let operand), .count(let operand), .negate(let operand): visit(operand)
            case .isIn(let value, let candidates):
                visit(value)
                candidates.forEach(visit)
            case .between(let value, let lower, let upper):
                visit(value)
                visit(lower)
                visit(upper)
            case .any(let collection, let body), .all(let collection, let body):
                visit(collection)
                visit(body)
            case .conditional(let condition, let then, let otherwise):
                visit(condition)
                visit(then)
                visit(otherwise)
            }
        }
        visit(self)
        return readsAll ? nil : fields
    }
}
