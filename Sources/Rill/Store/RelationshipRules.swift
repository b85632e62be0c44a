import RillStorage

/// What one save's transaction does for relationships, change by change: keeps the reference
/// index in step with the references records hold, applies delete rules (cascades, removals of
/// references, denials), and at the end checks that every reference the save made names a record
/// that exists.
///
/// The changes it derives (a cascaded delete, a reference removed) are applied in the same
/// transaction and recorded in the same commit as the save's own, so history, replay and live
/// queries see them as changes like any other. A denial, or a reference to a missing record,
/// throws, which aborts the transaction: nothing of the save is written.
struct RelationshipRules {
    let txn: WriteTransaction
    let meta: Database
    /// The storage of each entity met so far, as the transaction sees it.
    private var storages: [String: EntityStorage] = [:]
    /// References the save added: checked at the end, when every change is in.
    private var added: [(source: String, field: String, sourceKey: [UInt8], target: String, targetKey: [UInt8])] = []
    /// Deletes a rule denies unless a later change of the save ends the reference (the referrer
    /// deleted or pointed elsewhere, the record put back): checked at the end, on the save's end
    /// state, so that the order of its changes does not matter.
    private var denials: [Denial] = []
    /// Changes derived and not yet applied, first in first out.
    private var pending: [Derived] = []
    /// False while applying another node's commit, whose entry holds what its changes entail.
    private var derivesChanges = true

    private struct Denial {
        var target: String
        var targetKey: [UInt8]
        var referrer: (entity: String, field: String, key: [UInt8])
        var references: Database
        var message: String
    }

    private enum Derived {
        case delete(entity: String, key: [UInt8])
        case removeReference(entity: String, key: [UInt8], field: String, target: [UInt8])
    }

    init(txn: WriteTransaction, meta: Database) {
        self.txn = txn
        self.meta = meta
    }

    /// Whether a change of `entity` can concern relationships: it has references, or a record of
    /// it can be referenced (the store has a reference index).
    static func concern(_ entity: EntityStorage) -> Bool { entity.references != nil }

    /// Follows up one applied change of `entity`: the reference index, then the delete rules, then
    /// every change those derive, each appended to `applied`.
    mutating func follow(
        _ change: LogEntry.Change, of entity: EntityStorage, into applied: inout [LogEntry.Change]
    ) throws {
        storages[entity.name] = storages[entity.name] ?? entity
        try index(change, of: entity)
        while !pending.isEmpty {
            let next = pending.removeFirst()
            guard let derived = try prepare(next) else { continue }
            let storage = try self.storage(derived.entityName)!
            guard let effective = try Store.apply(derived, to: storage, in: txn) else { continue }
            applied.append(effective)
            try index(effective, of: storage)
        }
    }

    /// Checks, once every change is applied, that each reference the save added names a record.
    ///
    /// - Throws: `RillError(.danglingReference)` naming the first that does not.
    mutating func finish() throws {
        for denial in denials {
            let entry = try ReferenceKey.make(
                target: denial.target, targetKey: denial.targetKey, source: denial.referrer.entity,
                field: denial.referrer.field, sourceKey: denial.referrer.key)
            guard try txn.get(entry, in: denial.references) != nil else { continue }
            let restored = try storage(denial.target).map { try txn.get(denial.targetKey, in: $0.database) != nil }
            guard restored != true else { continue }
            throw RillError(.deleteDenied, denial.message)
        }
        for reference in added {
            let exists = try storage(reference.target).map { try txn.get(reference.targetKey, in: $0.database) != nil }
            guard exists != true else { continue }
            // Still referenced at the end: a later change of the save may have removed it.
            let entry = try ReferenceKey.make(
                target: reference.target, targetKey: reference.targetKey, source: reference.source,
                field: reference.field, sourceKey: reference.sourceKey)
            guard let references = storages[reference.source]?.references,
                try txn.get(entry, in: references) != nil
            else { continue }
            throw RillError(
                .danglingReference,
                "\(reference.source) \(Self.describe(reference.sourceKey)) references \(reference.target) "
                    + "\(Self.describe(reference.targetKey)) through \(reference.field), but there is no such "
                    + "\(reference.target)")
        }
    }

    // MARK: - Steps

    private mutating func storage(_ name: String) throws -> EntityStorage? {
        if let known = storages[name] { return known }
        let found = try Store.storage(named: name, in: txn, meta: meta)
        storages[name] = found
        return found
    }

    /// Keeps the reference index for one change of a commit another node made (applied from the
    /// replicated log): its cascades and removals are in its entry already, and it was checked there.
    mutating func keepReferences(for change: LogEntry.Change, of entity: EntityStorage) throws {
        derivesChanges = false
        try index(change, of: entity)
    }

    /// Keeps the reference index for one change, and queues what deleting a record entails.
    private mutating func index(_ change: LogEntry.Change, of entity: EntityStorage) throws {
        guard let references = entity.references else { return }
        let key = change.key
        if !entity.storedReferences.isEmpty {
            let old = try change.before.map { try targets(in: $0, of: entity, key: key) } ?? []
            let new = try change.record.map { try targets(in: $0, of: entity, key: key) } ?? []
            let oldKeys = Set(old.map(\.entry))
            let newKeys = Set(new.map(\.entry))
            for target in old where !newKeys.contains(target.entry) {
                _ = try txn.delete(target.entry, in: references)
            }
            for target in new where !oldKeys.contains(target.entry) {
                try txn.put([], for: target.entry, in: references)
                added.append((entity.name, target.field, key, target.entity, target.key))
            }
            if change.kind == .delete, derivesChanges {
                for target in old {
                    let rule = entity.relationships.first { $0.field == target.field }?.deleteRule
                    if rule == .cascade {
                        pending.append(.delete(entity: target.entity, key: target.key))
                    }
                }
            }
        }
        guard change.kind == .delete, derivesChanges else { return }
        // The records that reference the deleted one, and what the deleted one's type says of them.
        let prefix = try ReferenceKey.prefix(target: entity.name, key: key)
        var referrers: [(entity: String, field: String, key: [UInt8])] = []
        try txn.forEachEntry(in: references, withPrefix: prefix) { rest, _ in
            if let referrer = ReferenceKey.referrer(UnsafeRawBufferPointer(rebasing: rest)) {
                referrers.append(referrer)
            }
        }
        for referrer in referrers {
            let inverse = entity.relationships.first {
                $0.kind == .inverse && $0.entity == referrer.entity && $0.inverseOf == referrer.field
            }
            let rule = inverse?.deleteRule ?? .nullify
            let name = "\(entity.name) \(Self.describe(key))"
            let holder = "\(referrer.entity) \(Self.describe(referrer.key))"
            switch rule {
            case .deny:
                denials.append(
                    Denial(
                        target: entity.name, targetKey: key, referrer: referrer, references: references,
                        message: "cannot delete \(name): \(holder) references it through \(referrer.field), and "
                            + "\(entity.name).\(inverse?.field ?? referrer.field) denies the delete"))
            case .cascade:
                pending.append(.delete(entity: referrer.entity, key: referrer.key))
            case .nullify:
                let kind = try storage(referrer.entity)?.relationships.first { $0.field == referrer.field }?.kind
                if kind == .requiredReference {
                    denials.append(
                        Denial(
                            target: entity.name, targetKey: key, referrer: referrer, references: references,
                            message: "cannot delete \(name): \(holder) requires it (\(referrer.entity)."
                                + "\(referrer.field) is not optional); delete \(holder) first, or make the rule cascade"
                        ))
                    continue
                }
                pending.append(
                    .removeReference(entity: referrer.entity, key: referrer.key, field: referrer.field, target: key))
            }
        }
    }

    /// The change a derived step makes, from the record as the transaction holds it now; nil when
    /// there is nothing left to do (the record is gone already).
    private mutating func prepare(_ derived: Derived) throws -> PreparedChange? {
        switch derived {
        case .delete(let name, let key):
            guard let storage = try storage(name) else { return nil }
            return PreparedChange(entity: storage, key: key, operation: .delete)
        case .removeReference(let name, let key, let field, let target):
            guard let storage = try storage(name), let bytes = try txn.get(key, in: storage.database) else {
                return nil
            }
            let record = try Store.recordValue(
                bytes, key: UnsafeRawBufferPointer(start: nil, count: 0), entity: name, fields: [field])
            guard case .map(let fields) = record, let value = fields.first?.value else { return nil }
            let targetKind = try self.storage(storage.relationships.first { $0.field == field }?.entity ?? "")?
                .identifierKind
            let remaining: RecordValue
            switch value {
            case .array(let items):
                remaining = .array(
                    try items.filter {
                        try Store.referenceKey($0, targetKind: targetKind, field: field, of: name) != target
                    })
            default:
                remaining = .null
            }
            return PreparedChange(
                entity: storage, key: key, operation: .update([RecordField(name: field, value: remaining)]))
        }
    }

    private mutating func targets(
        in record: [UInt8], of entity: EntityStorage, key: [UInt8]
    ) throws -> [(entity: String, key: [UInt8], field: String, entry: [UInt8])] {
        let found = try record.withUnsafeBytes { bytes in
            try Store.referencedTargets(
                in: bytes, of: entity, targetKind: { name in try storage(name)?.identifierKind })
        }
        return try found.map { target in
            (
                target.entity, target.key, target.field,
                try ReferenceKey.make(
                    target: target.entity, targetKey: target.key, source: entity.name, field: target.field,
                    sourceKey: key)
            )
        }
    }

    private static func describe(_ key: [UInt8]) -> String {
        key.withUnsafeBytes { AnyIdentifier(storageKey: $0) }.map { "\($0)" } ?? "?"
    }
}
