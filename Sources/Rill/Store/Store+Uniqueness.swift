import RillStorage

/// Unique indexes: the rule each save keeps, inside its write transaction, and the check that an index made
/// unique holds already.
///
/// The rule: no two records have equal values of every field of a unique index (equal as index keys are:
/// numbers by value, strings by canonical equivalence, as Swift's `==`); a record with a null or missing value
/// for a field of the index is not held to it, nor one with a floating-point NaN, which Swift's `==` finds equal
/// to nothing. A change that would break it:
/// - an insert (no record has its identifier) takes the other record's place when every unique index it
///   conflicts on says `upsert`: the change becomes an update of that record, with the new record's values
///   and the stored record's identifier; with `fail`, the save fails;
/// - an update (the record exists) fails the save, whatever the policy: merging two stored records would take
///   one of them away, which no one asked for;
/// - conflicts with two different records fail the save.
///
/// Changes apply in their order in the save, each seeing the ones before it: of two inserts with the same values
/// in one save, the second updates the record the first inserted (or fails the save with `fail`).
extension Store {
    /// The identifier key and record that an upsert of `record` under `key` writes under `entity`'s unique
    /// indexes: the same ones, or the stored record's identifier key and `record` with its identifier, when the
    /// upsert is an insert of values another record has and the index says `upsert`.
    ///
    /// - Throws: `RillError(.uniqueConflict)` with a `UniqueConflict`, when the change breaks the rule.
    static func resolvingUniqueness(
        of record: [UInt8], key: [UInt8], entity: EntityStorage, in txn: WriteTransaction
    ) throws -> (key: [UInt8], record: [UInt8]) {
        // Only the fields the unique indexes read: the whole record is decoded only for an upsert onto another.
        let value = try record.withUnsafeBytes { try RecordValue(record: $0, fields: entity.uniqueFields) }
        var found: (key: [UInt8], index: IndexStorage)?
        var strict = false
        for index in entity.indexes where index.uniqueness != nil {
            guard let owner = try owner(of: value, key: key, index: index, entity: entity, in: txn) else { continue }
            if let found, found.key != owner {
                let first = conflict(value, key: key, owner: found.key, index: found.index, entity: entity)
                let second = conflict(value, key: key, owner: owner, index: index, entity: entity)
                throw RillError(
                    .uniqueConflict,
                    "\(entity.name) \(first.identifier) would have the \(first.assignments) of \(entity.name) "
                        + "\(first.existingIdentifier) and the \(second.assignments) of \(entity.name) "
                        + "\(second.existingIdentifier)",
                    underlyingError: first)
            }
            found = (owner, index)
            if index.uniqueness == .fail { strict = true }
        }
        guard let found else { return (key, record) }
        let conflict = conflict(value, key: key, owner: found.key, index: found.index, entity: entity)
        if try txn.get(key, in: entity.database) != nil {
            throw RillError(
                .uniqueConflict,
                "\(entity.name) \(conflict.identifier) cannot take \(conflict.assignments): \(entity.name) "
                    + "\(conflict.existingIdentifier) has \(conflict.fields.count == 1 ? "it" : "them")",
                underlyingError: conflict)
        }
        if strict {
            throw RillError(
                .uniqueConflict,
                "\(entity.name) \(conflict.existingIdentifier) already has \(conflict.assignments), so "
                    + "\(entity.name) \(conflict.identifier) cannot be inserted (the unique index "
                    + "\(entity.name)(\(found.index.name)) fails on conflict)",
                underlyingError: conflict)
        }
        // The stored record keeps its identifier: the new record's `id` field becomes the stored one's.
        guard let storedValue = try storedRecord(found.key, of: entity, in: txn) else {
            throw RillError(
                .corruptStore, "the unique index \(entity.name)(\(found.index.name)) lists a missing record")
        }
        let whole = try record.withUnsafeBytes { try RecordValue(record: $0) }
        guard case .map(let storedFields) = storedValue, let storedID = storedFields.first(where: { $0.name == "id" }),
            case .map(var fields) = whole, let position = fields.firstIndex(where: { $0.name == "id" })
        else {
            throw RillError(
                .uniqueConflict,
                "\(conflict): the insert cannot update \(entity.name) \(conflict.existingIdentifier) "
                    + "without an `id` field in both records",
                underlyingError: conflict)
        }
        fields[position].value = storedID.value
        return (found.key, RecordValue.map(fields).recordBytes())
    }

    /// The identifier key of a record other than `key`'s that has `value`'s values of the unique `index`, or nil.
    static func owner(
        of value: RecordValue, key: [UInt8], index: IndexStorage, entity: EntityStorage, in txn: some Transaction
    ) throws -> [UInt8]? {
        let values = index.fieldPaths.map { QueryEvaluator.read($0, from: value) }
        if values.contains(where: isUnheld) { return nil }
        let entry = try index.entry(for: value, id: key, entity: entity.name)
        let prefix = Array(entry.key[..<entry.valuesLength])
        // A cut value's key stands for every value sharing its prefix: those are compared whole.
        let whole = entry.hasCutValue ? try wholeKey(values, index: index, entity: entity) : nil
        var owner: [UInt8]?
        try txn.forEachEntry(in: index.database, from: prefix) { stored, list in
            guard stored.starts(with: prefix) else { return false }
            let ids = try IndexEntry.identifiers(
                key: stored, valuesLength: prefix.count, value: list, index: index.name)
            for id in ids where id != key {
                if let whole {
                    guard let other = try storedRecord(id, of: entity, in: txn) else { continue }
                    let otherValues = index.fieldPaths.map { QueryEvaluator.read($0, from: other) }
                    guard try wholeKey(otherValues, index: index, entity: entity) == whole else { continue }
                }
                owner = id
                return false
            }
            return true
        }
        return owner
    }

    /// The two records of the first pair in `index` (filled from `entity`'s records) that share values, or nil
    /// when the index holds each set of values once (nulls aside).
    static func firstConflict(
        in index: IndexStorage, of entity: EntityStorage, txn: some Transaction
    ) throws -> UniqueConflict? {
        // Keys in order: entries with equal values are adjacent, so a run of them is a group to look at.
        var group: (values: [UInt8], cut: Bool, ids: [[UInt8]])?
        func conflictInGroup() throws -> UniqueConflict? {
            guard let group, group.ids.count > 1 else { return nil }
            var seen: [[UInt8]: [UInt8]] = [:]
            for id in group.ids {
                guard let value = try storedRecord(id, of: entity, in: txn),
                    !index.fieldPaths.contains(where: { isUnheld(QueryEvaluator.read($0, from: value)) })
                else { continue }
                let whole =
                    group.cut
                    ? try wholeKey(
                        index.fieldPaths.map { QueryEvaluator.read($0, from: value) }, index: index, entity: entity)
                    : group.values
                if let first = seen[whole] {
                    return conflict(value, key: id, owner: first, index: index, entity: entity)
                }
                seen[whole] = id
            }
            return nil
        }
        var found: UniqueConflict?
        try txn.forEachEntry(in: index.database) { key, list in
            let (length, cutEnd) = try index.valuesExtent(of: key, entity: entity.name)
            if try hasNull(key, fields: index.fieldPaths.count) { return true }
            let values = Array(key[..<length])
            let ids = try IndexEntry.identifiers(key: key, valuesLength: length, value: list, index: index.name)
            if group?.values == values {
                group!.ids += ids
                return true
            }
            if let conflict = try conflictInGroup() {
                found = conflict
                return false
            }
            group = (values, cutEnd != nil, ids)
            return true
        }
        return try found ?? conflictInGroup()
    }

    /// The stored record of `entity` with identifier key `key`, read without its model type; nil when missing.
    private static func storedRecord(
        _ key: [UInt8], of entity: EntityStorage, in txn: some Transaction
    ) throws -> RecordValue? {
        guard let bytes = try txn.get(key, in: entity.database) else { return nil }
        return try key.withUnsafeBytes { try Store.recordValue(bytes, key: $0, entity: entity.name) }
    }

    /// The encodings of `values` whole, one after the other: equal exactly when the values are, as keys are.
    private static func wholeKey(
        _ values: [RecordValue], index: IndexStorage, entity: EntityStorage
    ) throws -> [UInt8] {
        var key: [UInt8] = []
        for (value, path) in zip(values, index.fieldPaths) {
            do {
                try IndexKey.append(value, to: &key)
            } catch {
                throw RillError(
                    .invalidConfiguration,
                    "the index \(entity.name)(\(index.name)) cannot hold the value of "
                        + "`\(path.joined(separator: "."))`: \(error)",
                    underlyingError: error)
            }
        }
        return key
    }

    /// Whether a record with `value` in a field of a unique index is not held to it: a null, or a NaN (equal to
    /// nothing under Swift's `==`, though its index keys are alike).
    private static func isUnheld(_ value: RecordValue) -> Bool {
        switch value {
        case .null: true
        case .double(let number): number.isNaN
        case .float(let number): number.isNaN
        default: false
        }
    }

    /// The first byte of a null's key encoding.
    private static let nullKeyByte: UInt8 = {
        var key: [UInt8] = []
        try? IndexKey.append(.null, to: &key)
        return key[0]
    }()

    /// Whether one of the first `fields` values of an index key is null.
    private static func hasNull(_ key: UnsafeRawBufferPointer, fields: Int) throws -> Bool {
        var offset = 0
        for _ in 0..<fields {
            if key[offset] == nullKeyByte { return true }
            _ = try IndexKey.skip(key, offset: &offset)
        }
        return false
    }

    /// The conflict of the record `value` (identifier key `key`) with the record `owner` on `index`.
    private static func conflict(
        _ value: RecordValue, key: [UInt8], owner: [UInt8], index: IndexStorage, entity: EntityStorage
    ) -> UniqueConflict {
        func identifier(_ key: [UInt8]) -> String {
            key.withUnsafeBytes { AnyIdentifier(storageKey: $0) }.map { "\($0)" } ?? "?"
        }
        return UniqueConflict(
            entity: entity.name, fields: index.fieldPaths.map { $0.joined(separator: ".") },
            values: index.fieldPaths.map { QueryEvaluator.read($0, from: value).jsonString() },
            identifier: identifier(key), existingIdentifier: identifier(owner))
    }
}

extension Store {
    /// The identifier key of the stored record that has `record`'s values of one of `entity`'s unique indexes
    /// (another record than `key`'s), or nil: where an insert of `record` under `key` went when the store upserted
    /// it onto an existing record.
    package func uniqueOwner(of record: [UInt8], key: [UInt8], entity: EntityStorage) throws -> [UInt8]? {
        guard entity.hasUniqueIndexes else { return nil }
        let value = try record.withUnsafeBytes { try RecordValue(record: $0) }
        return try withReadTransaction { txn in
            for index in entity.indexes where index.uniqueness != nil {
                if let owner = try Self.owner(of: value, key: key, index: index, entity: entity, in: txn) {
                    return owner
                }
            }
            return nil
        }
    }
}
