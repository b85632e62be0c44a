import Foundation

/// Where the follower is in a batch of commits read in one transaction: the commit being applied,
/// and what a query needs to read the store as it was at that commit.
///
/// The transaction sees the store at the batch's last commit (its snapshot). A query that must
/// read more rows from the store at an earlier commit (a window to refill) reads them at the
/// snapshot and corrects for the records that later commits of the batch changed, using
/// ``records(of:keys:)``.
final class CommitContext {
    let store: Store
    let transaction: StoreSnapshot
    /// The commits of the batch, in order; the snapshot is the last one's state.
    let entries: [LogEntry]
    /// The commit being applied (an index of `entries`); -1 for the state before the batch's
    /// first commit (a query read as of then, `MaintainedQuery.loadWindow(before:)`).
    var index: Int
    /// The last commit the transaction sees (it may be past the batch).
    let snapshot: UInt64
    /// The commits after the batch up to the snapshot, read when first needed.
    private var beyond: [LogEntry]?
    /// Records as of the commit being applied that the follower already knows (nil: none).
    private let images: RecordImages?
    /// Records as of the batch's start, found in the log before it, by entity and key.
    private var beforeBatch: [String: [[UInt8]: [UInt8]?]] = [:]

    init(
        store: Store, transaction: StoreSnapshot, entries: [LogEntry], index: Int, snapshot: UInt64,
        images: RecordImages? = nil
    ) {
        self.store = store
        self.transaction = transaction
        self.entries = entries
        self.index = index
        self.snapshot = snapshot
        self.images = images
    }

    var sequence: UInt64 { index >= 0 ? entries[index].sequence : (entries.first?.sequence ?? snapshot + 1) - 1 }

    /// The commits of the batch up to the current one, in order.
    private var applied: ArraySlice<LogEntry> { index >= 0 ? entries[...index] : [] }

    /// The identifier keys of `entity` that commits after the current one (up to the snapshot) change.
    func keysChangedLater(in entity: String) throws -> Set<[UInt8]> {
        if beyond == nil {
            let last = entries.last?.sequence ?? snapshot
            beyond =
                last < snapshot
                ? try store.log.entries(after: last, in: transaction) : []
        }
        var keys: Set<[UInt8]> = []
        for entry in entries[(index + 1)...] + (beyond ?? []) {
            for change in entry.changes where change.entity == entity { keys.insert(change.key) }
        }
        return keys
    }

    /// The record of `entity` with identifier key `key` as of the current commit, when the
    /// batch's commits up to it, or a later one up to the snapshot, changed it: `.some(nil)`
    /// when it did not exist then. Nil when none of them changed it, so the snapshot's record
    /// is the one (or when a later commit's entry holds no record before, format 1).
    func changedRecord(of entity: String, key: [UInt8]) throws -> [UInt8]?? {
        for entry in applied.reversed() {
            if let change = entry.changes.last(where: { $0.entity == entity && $0.key == key }) {
                return .some(change.record)
            }
        }
        guard try keysChangedLater(in: entity).contains(key) else { return nil }
        for entry in entries[(index + 1)...] + (beyond ?? []) {
            if let change = entry.changes.first(where: { $0.entity == entity && $0.key == key }) {
                guard entry.holdsBeforeImages else { return nil }
                return .some(change.before)
            }
        }
        return nil
    }

    /// The records of `entity` with identifiers `keys` as of the current commit; a key that did
    /// not exist then is absent from the result.
    ///
    /// Found in the batch's commits up to the current one, then among the records the follower
    /// knows, then in the log before the batch, read backwards once for all keys still missing.
    func records(of entity: String, keys: some Collection<[UInt8]>) throws -> [[UInt8]: [UInt8]] {
        var found: [[UInt8]: [UInt8]] = [:]
        var missing: Set<[UInt8]> = []
        outer: for key in keys {
            for entry in applied.reversed() {
                if let change = entry.changes.last(where: { $0.entity == entity && $0.key == key }) {
                    if let record = change.record { found[key] = record }
                    continue outer
                }
            }
            missing.insert(key)
        }
        for (key, record) in try recordsBeforeBatch(of: entity, keys: missing) { found[key] = record }
        return found
    }

    /// The records of `entity` with identifiers `keys` as of the commit before the batch's
    /// first (absent when they did not exist then).
    func recordsBeforeBatch(of entity: String, keys: some Collection<[UInt8]>) throws -> [[UInt8]: [UInt8]] {
        var found: [[UInt8]: [UInt8]] = [:]
        var missing: Set<[UInt8]> = []
        var known = beforeBatch[entity, default: [:]]
        for key in keys {
            let image: [UInt8]?? = known[key] ?? images?.record(of: entity, key: key) ?? nil
            switch image {
            case .some(.some(let record)): found[key] = record
            case .some(.none): break
            case .none: missing.insert(key)
            }
        }
        // A record a commit of the batch changes was, before the batch, what the first such
        // change found: its record before, or none for an insert.
        // (An entry of format 1 holds no records before: a key it changes first is left to the walk.)
        var open = missing
        for entry in entries where !open.isEmpty {
            for change in entry.changes where change.entity == entity && open.remove(change.key) != nil {
                guard entry.holdsBeforeImages else { continue }
                missing.remove(change.key)
                known[change.key] = .some(change.before)
                if let record = change.before { found[change.key] = record }
            }
        }
        guard !missing.isEmpty, let first = entries.first, first.sequence > 1 else {
            beforeBatch[entity] = known
            return found
        }
        // One backward walk of the log for every missing key; the first version met is the
        // latest. Every key met on the way is kept, for later questions.
        try store.log.forEachEntry(before: first.sequence, in: transaction) { entry in
            for change in entry.changes.reversed() where change.entity == entity {
                guard known.index(forKey: change.key) == nil else { continue }
                known[change.key] = .some(change.record)
                images?.remember(entity: entity, key: change.key, record: change.record, ifAbsent: true)
                if missing.remove(change.key) != nil, let record = change.record { found[change.key] = record }
            }
            return !missing.isEmpty
        }
        // Keys the log never wrote before the batch did not exist.
        for key in missing { known[key] = .some(nil) }
        beforeBatch[entity] = known
        return found
    }
}
