import Foundation

/// One change of a commit as the live queries see it: decoded at most once, whichever queries ask.
///
/// The queries of a commit may apply on two threads at once (`CommitApplier`): what is decoded
/// on demand is kept under `lock`.
final class DecodedChange: @unchecked Sendable {
    // Sendable: the decoded values are read and written under `lock`; the rest is immutable.
    let change: LogEntry.Change
    private let lock = NSLock()
    // `value`, `models` and `slotValues` are read and written under `lock` only, so their
    // accesses never overlap: checking their exclusivity at run time cost a screen's read of a
    // field a third of it.
    @exclusivity(unchecked) private var value: RecordValue?
    @exclusivity(unchecked) private var models: [ObjectIdentifier: Any] = [:]

    /// The change's parts, read without copying the change.
    let key: [UInt8]
    let kind: LogEntry.Kind
    let changedFields: [String]
    /// The record did not change: a related record did, and the query tests it again (see
    /// `RelatedDependency`).
    let isRelated: Bool
    /// The store's rows shared by live queries, when the change is applied to followed ones: a
    /// query's row of the record after the change is then the one other queries take.
    let sharedRows: SharedRows?

    /// The table of the fields the screens of the entity's queries read, and the values of
    /// those fields by slot, each read once (nil: not read yet; `.some(nil)`: a deletion).
    private let table: FieldTable
    @exclusivity(unchecked) private var slotValues: [RecordValue??]
    /// The slots of the fields an update changed (slots past 63 are left out); 0 otherwise.
    let changedMask: UInt64

    init(
        _ change: LogEntry.Change, fields table: FieldTable = FieldTable(), isRelated: Bool = false,
        sharedRows: SharedRows? = nil
    ) {
        self.change = change
        self.isRelated = isRelated
        self.sharedRows = sharedRows
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
    func fresh() -> DecodedChange {
        DecodedChange(change, fields: table, isRelated: isRelated, sharedRows: sharedRows)
    }

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

    /// `field(slot:)`, reading a value decoded already without the lock: only while one thread
    /// has the change, as the follower has a new one while it screens it for every query,
    /// before handing it on (the lock cost each query's read of the field more than the read).
    func unsharedField(slot: Int) throws -> RecordValue? {
        if slot < slotValues.count, let known = slotValues[slot] { return known }
        return try field(slot: slot)
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
