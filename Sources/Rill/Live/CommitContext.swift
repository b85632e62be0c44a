import Foundation
import RillStorage

/// One change of a commit as the live queries see it: decoded at most once, whichever queries ask.
final class DecodedChange {
    let change: LogEntry.Change
    private var value: RecordValue?
    private var models: [ObjectIdentifier: Any] = [:]
    private var fields: [String: RecordValue] = [:]

    /// The change's parts, read without copying the change.
    let key: [UInt8]
    let kind: LogEntry.Kind
    let changedFields: [String]

    init(_ change: LogEntry.Change) {
        self.change = change
        key = change.key
        kind = change.kind
        changedFields = change.changedFields
    }

    /// The record after the change, schema-less (nil for a deletion).
    func recordValue() throws -> RecordValue? {
        if let value { return value }
        guard let record = change.record else { return nil }
        let decoded = try record.withUnsafeBytes { bytes in
            try change.key.withUnsafeBytes { key in try Store.recordValue(bytes, key: key, entity: change.entity) }
        }
        value = decoded
        return decoded
    }

    /// A top-level field of the record after the change (nil for a deletion).
    func field(_ name: String) throws -> RecordValue? {
        if let known = fields[name] { return known }
        guard let record = try recordValue() else { return nil }
        let value = QueryEvaluator.read([name], from: record)
        fields[name] = value
        return value
    }

    /// The record after the change as a `T` (nil for a deletion).
    func model<T: PersistentModel>(_ type: T.Type) throws -> T? {
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
/// ``record(of:key:)``.
final class CommitContext {
    let store: Store
    let transaction: ReadTransaction
    /// The commits of the batch, in order; the snapshot is the last one's state.
    let entries: [LogEntry]
    /// The commit being applied (an index of `entries`).
    var index: Int
    /// The last commit the transaction sees (it may be past the batch).
    let snapshot: UInt64
    /// The commits after the batch up to the snapshot, read when first needed.
    private var beyond: [LogEntry]?

    init(store: Store, transaction: ReadTransaction, entries: [LogEntry], index: Int, snapshot: UInt64) {
        self.store = store
        self.transaction = transaction
        self.entries = entries
        self.index = index
        self.snapshot = snapshot
    }

    var sequence: UInt64 { entries[index].sequence }

    /// The identifier keys of `entity` that commits after the current one (up to the snapshot) change.
    func keysChangedLater(in entity: String) throws -> Set<[UInt8]> {
        if beyond == nil {
            let last = entries.last?.sequence ?? snapshot
            beyond =
                last < snapshot
                ? try LogFollower.entries(after: last, limit: .max, log: store.log, in: transaction) : []
        }
        var keys: Set<[UInt8]> = []
        for entry in entries[(index + 1)...] + (beyond ?? []) {
            for change in entry.changes where change.entity == entity { keys.insert(change.key) }
        }
        return keys
    }

    /// The record of `entity` with identifier `key` as of the current commit: `.some(nil)` when
    /// it did not exist then.
    ///
    /// Found in the batch's commits up to the current one; otherwise in the log before the batch,
    /// read backwards (a rare path: only for a record that a later commit of the batch changes).
    func record(of entity: String, key: [UInt8]) throws -> [UInt8]? {
        for entry in entries[...index].reversed() {
            if let change = entry.changes.last(where: { $0.entity == entity && $0.key == key }) {
                return change.record
            }
        }
        return try recordBeforeBatch(of: entity, key: key)
    }

    /// The record of `entity` with identifier `key` as of the commit before the batch's first:
    /// `.some(nil)` when it did not exist then. Read from the log backwards.
    func recordBeforeBatch(of entity: String, key: [UInt8]) throws -> [UInt8]? {
        guard let first = entries.first, first.sequence > 1 else { return nil }
        return try transaction.withCursor(store.log) { cursor -> [UInt8]? in
            var current = try cursor.seek(atOrAfter: LogEntry.key(for: first.sequence))
            current = current == nil ? try cursor.last() : try cursor.previous()
            while let raw = current {
                let entry = try LogEntry(sequence: try LogEntry.sequence(fromKey: raw.key), bytes: raw.value)
                if let change = entry.changes.last(where: { $0.entity == entity && $0.key == key }) {
                    return change.record
                }
                current = try cursor.previous()
            }
            return nil
        }
    }
}
