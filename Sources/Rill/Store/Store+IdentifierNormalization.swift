import Foundation
import RillStorage

/// Format 4: a string identifier's key is the UTF-8 of its NFC form (see
/// `ModelIdentifier.appendStorageKey`), so that identifiers Swift calls equal are one record.
/// Earlier formats keyed the UTF-8 as written.
extension Store {
    /// The key of the same identifier in format 4 when `key` is a string identifier's key not in
    /// NFC; nil when it is already its own format-4 key (every key of another kind, and every string
    /// of scalars below U+0300).
    static func normalizedIdentifierKey(_ key: UnsafeRawBufferPointer) -> [UInt8]? {
        guard key.first == IdentifierKind.string.rawValue, key.dropFirst().contains(where: { $0 >= 0xCC }),
            let id = String(storageKey: key)
        else { return nil }
        let normalized = id.storageKey
        return normalized.elementsEqual(key) ? nil : normalized
    }

    /// Moves every record whose string identifier a format-3 store keyed other than in NFC to its
    /// NFC key, in one commit of the log written in `txn` (so that a replay of the log gives the
    /// same records); the reference index follows. A record whose NFC key another record holds
    /// already (two identifiers Swift calls equal, stored apart) leaves the projection to that
    /// one: the log keeps both. Nothing is written when every key is in NFC, nor to a store that
    /// follows a replicated log.
    ///
    /// - Returns: the number of records moved or dropped.
    static func normalizeIdentifierKeys(
        in txn: WriteTransaction, meta: Database, log: Log, directory: String, flushed: Bool
    ) throws -> Int {
        // A replica's log is the replicated log's, which no node may add a commit to alone.
        guard try txn.get(replicaKey, in: meta) == nil else { return 0 }
        var changes: [LogEntry.Change] = []
        for name in try keys(withPrefix: EntityStorage.catalogPrefix, in: meta, txn: txn) {
            let entity = try storage(of: name, in: txn, meta: meta, directory: directory)
            guard entity.identifierKind == .string else { continue }
            var moves: [(from: [UInt8], to: [UInt8], record: [UInt8])] = []
            _ = try txn.forEachEntry(in: entity.database) { key, value in
                if let normalized = normalizedIdentifierKey(key) {
                    moves.append((Array(key), normalized, Array(value)))
                }
                return true
            }
            for move in moves {
                let delete = PreparedChange(entity: entity, key: move.from, operation: .delete)
                if let change = try apply(delete, to: entity, in: txn) { changes.append(change) }
                let insert = PreparedChange(entity: entity, key: move.to, operation: .insertIfAbsent(move.record))
                if let change = try apply(insert, to: entity, in: txn) { changes.append(change) }
            }
        }
        guard !changes.isEmpty else { return 0 }
        try normalizeReferenceKeys(in: txn, meta: meta)
        let next = try log.next(in: txn)
        let entry = LogEntry(
            sequence: next.sequence, timestamp: next.timestamp, author: "rill: string identifiers keyed in NFC",
            changes: changes)
        try log.append(entry, in: txn)
        try log.noteFlush(of: entry.sequence, flushed: flushed, in: txn)
        return changes.count { $0.kind == .delete }
    }

    /// Rewrites each entry of the reference index whose target or referencing record is keyed by a
    /// string identifier not in NFC.
    private static func normalizeReferenceKeys(in txn: WriteTransaction, meta: Database) throws {
        guard let references = try referencesDatabase(in: txn, meta: meta) else { return }
        var rewrites: [(old: [UInt8], new: [UInt8])] = []
        _ = try txn.forEachEntry(in: references) { key, _ in
            if let new = try normalizedReferenceKey(key) { rewrites.append((Array(key), new)) }
            return true
        }
        for rewrite in rewrites {
            _ = try txn.delete(rewrite.old, in: references)
            try txn.put([], for: rewrite.new, in: references)
        }
    }

    /// A reference entry with both identifier keys in NFC; nil when they are already.
    private static func normalizedReferenceKey(_ key: UnsafeRawBufferPointer) throws -> [UInt8]? {
        guard let (target, referrer) = splitReference(key) else { return nil }
        let newTarget = target.key.withUnsafeBytes { normalizedIdentifierKey($0) }
        let newSource = referrer.key.withUnsafeBytes { normalizedIdentifierKey($0) }
        guard newTarget != nil || newSource != nil else { return nil }
        return try ReferenceKey.make(
            target: target.entity, targetKey: newTarget ?? target.key, source: referrer.entity,
            field: referrer.field, sourceKey: newSource ?? referrer.key)
    }
}
