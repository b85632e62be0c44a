import Foundation

/// One change of a commit as the live queries see it: decoded at most once, whichever queries ask.
///
/// The queries of a commit may apply on two threads at once (`CommitApplier`): what is decoded
/// on demand is kept under `lock`.
final class DecodedChange: @unchecked Sendable {
    // Sendable: the decoded values are read and written under `lock`; the rest is immutable.
    let change: LogEntry.Change
    private let lock = NSLock()
    private var value: RecordValue?
    private var models: [ObjectIdentifier: Any] = [:]

    /// The change's parts, read without copying the change.
    let key: [UInt8]
    let kind: LogEntry.Kind
    let changedFields: [String]

    /// The table of the fields the screens of the entity's queries read, and the values of
    /// those fields by slot, each read once (nil: not read yet; `.some(nil)`: a deletion).
    private let table: FieldTable
    private var slotValues: [RecordValue??]
    /// The slots of the fields an update changed (slots past 63 are left out); 0 otherwise.
    let changedMask: UInt64

    init(_ change: LogEntry.Change, fields table: FieldTable = FieldTable()) {
        self.change = change
        key = change.key
        kind = change.kind
        changedFields = change.changedFields
        self.table = table
        slotValues = Array(repeating: nil, count: table.count)
        var mask: UInt64 = 0
        if change.kind == .update {
            for field in change.changedFields {
                if let slot = table.existingSlot(for: field), slot < 64 { mask |= 1 << UInt64(slot) }
            }
        }
        changedMask = mask
    }

    /// A change of the same record with nothing decoded yet: for another thread, which then
    /// decodes what it needs on its own rather than sharing this one's memory.
    func fresh() -> DecodedChange { DecodedChange(change, fields: table) }

    /// The record after the change, schema-less (nil for a deletion).
    func recordValue() throws -> RecordValue? {
        lock.lock()
        defer { lock.unlock() }
        return try recordValueHoldingLock()
    }

    private func recordValueHoldingLock() throws -> RecordValue? {
        if let value { return value }
        guard let record = change.record else { return nil }
        let decoded = try record.withUnsafeBytes { bytes in
            try change.key.withUnsafeBytes { key in try Store.recordValue(bytes, key: key, entity: change.entity) }
        }
        value = decoded
        return decoded
    }

    /// The value of the top-level field the table numbers `slot` (nil for a deletion).
    func field(slot: Int) throws -> RecordValue? {
        lock.lock()
        defer { lock.unlock() }
        if slot < slotValues.count, let known = slotValues[slot] { return known }
        if slot >= slotValues.count { slotValues += Array(repeating: nil, count: slot + 1 - slotValues.count) }
        let value = try recordValueHoldingLock().map { QueryEvaluator.read([table.names[slot]], from: $0) }
        slotValues[slot] = .some(value)
        return value
    }

    /// The record after the change as a `T` (nil for a deletion).
    func model<T: PersistentModel>(_ type: T.Type) throws -> T? {
        lock.lock()
        defer { lock.unlock() }
        if let model = models[ObjectIdentifier(type)] { return model as? T }
        guard let record = change.record else { return nil }
        let model = try LiveDecoding.decode(T.self, record, key: change.key)
        models[ObjectIdentifier(type)] = model
        return model
    }
}

enum LiveDecoding {
    static func decode<T: PersistentModel>(_ type: T.Type, _ record: [UInt8], key: [UInt8]) throws -> T {
        do {
            return try RecordCoder.decode(T.self, from: record)
        } catch {
            let id = key.withUnsafeBytes { AnyIdentifier(storageKey: $0) }.map { "\($0)" } ?? "?"
            throw RillError(
                .decodingFailed,
                "the stored \(T.entityName) \(id) does not decode as \(T.self): \(ModelContext.describe(error))",
                underlyingError: error)
        }
    }
}

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
    /// The commit being applied (an index of `entries`).
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

    var sequence: UInt64 { entries[index].sequence }

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

    /// The records of `entity` with identifiers `keys` as of the current commit; a key that did
    /// not exist then is absent from the result.
    ///
    /// Found in the batch's commits up to the current one, then among the records the follower
    /// knows, then in the log before the batch, read backwards once for all keys still missing.
    func records(of entity: String, keys: some Collection<[UInt8]>) throws -> [[UInt8]: [UInt8]] {
        var found: [[UInt8]: [UInt8]] = [:]
        var missing: Set<[UInt8]> = []
        outer: for key in keys {
            for entry in entries[...index].reversed() {
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

/// Records the follower has seen in the commits it applied (and in walks back through the log),
/// each as of the last commit applied: so that refilling a window rarely reads the log again.
/// Bounded: past `capacity` records it starts afresh.
final class RecordImages {
    private var records: [String: [[UInt8]: [UInt8]?]] = [:]
    private var count = 0
    private let capacity: Int

    init(capacity: Int = 1 << 16) { self.capacity = capacity }

    /// `.some(nil)`: the record did not exist; nil: not known.
    func record(of entity: String, key: [UInt8]) -> [UInt8]?? {
        guard let table = records[entity], let entry = table[key] else { return nil }
        return .some(entry)
    }

    func remember(entity: String, key: [UInt8], record: [UInt8]?, ifAbsent: Bool = false) {
        if ifAbsent, self.record(of: entity, key: key) != nil { return }
        if count >= capacity {
            records.removeAll()
            count = 0
        }
        if records[entity, default: [:]].updateValue(record, forKey: key) == nil { count += 1 }
    }

    /// Notes every change of `entry` to one of `entities`.
    func apply(_ entry: LogEntry, entities: some Collection<String>) {
        for change in entry.changes where entities.contains(change.entity) {
            remember(entity: change.entity, key: change.key, record: change.record)
        }
    }
}
