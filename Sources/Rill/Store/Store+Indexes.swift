import Foundation
import RillStorage

extension Store {
    static let catalogVersionKey = Array("catalog-version".utf8)

    /// The version of the catalog of entities and indexes; it changes whenever an index is added.
    static func catalogVersion(in txn: some Transaction, meta: Database) throws -> UInt64 {
        guard let raw = try txn.get(catalogVersionKey, in: meta) else { return 0 }
        guard raw.count == 8 else { throw RillError(.corruptStore, "the catalog version is \(raw.count) bytes, not 8") }
        return raw.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Creates the index `name` of `entity` inside `txn`, fills it from the records `txn` sees, records it in
    /// the catalog and bumps the catalog version; all of it only if `txn` commits, so a failed build leaves no
    /// index behind. The build reports the records it has indexed to `progress`.
    ///
    /// - Throws: `RillError(.uniqueConflict)` naming two records that share values, for a unique index.
    static func buildIndex(
        named name: String, of entity: EntityStorage, uniqueness: UniqueConflictPolicy? = nil,
        in txn: WriteTransaction, meta: Database, progress: (@Sendable (StoreProgress) -> Void)?
    ) throws -> IndexStorage {
        let databaseName = IndexStorage.databaseName(entity: entity.name, index: name)
        let database = try txn.database(named: databaseName, create: true)!
        var index = IndexStorage(name: name, fieldPaths: IndexStorage.fieldPaths(fromName: name), database: database)
        let progress = BuildProgress(phase: .buildingIndex(entity: entity.name, index: name), handler: progress)
        try txn.removeAll(from: database)
        try fill(index, from: entity.database, entity: entity.name, txn: txn, progress: progress)
        index.uniqueness = uniqueness
        try setUniqueness(uniqueness, of: index, entity: entity, in: txn, meta: meta)
        return index
    }

    /// Records in `txn` that `index` (already filled) is unique with `uniqueness`, or plain when nil, and bumps
    /// the catalog version, so that other processes' saves reload the entity before they write.
    ///
    /// - Throws: `RillError(.uniqueConflict)` naming two records that share values, when `uniqueness` is set:
    ///   `txn` must then abort, so that nothing is written.
    static func setUniqueness(
        _ uniqueness: UniqueConflictPolicy?, of index: IndexStorage, entity: EntityStorage,
        in txn: WriteTransaction, meta: Database
    ) throws {
        if uniqueness != nil, let conflict = try firstConflict(in: index, of: entity, txn: txn) {
            throw RillError(
                .uniqueConflict,
                "\(entity.name)(\(index.name)) cannot be unique: \(conflict); change or delete one of them first",
                underlyingError: conflict)
        }
        try txn.put(
            IndexStorage.catalogValue(uniqueness: uniqueness),
            for: Array((IndexStorage.catalogPrefix(entity: entity.name) + index.name).utf8), in: meta)
        let version = try catalogVersion(in: txn, meta: meta) + 1
        try txn.put(withUnsafeBytes(of: version.bigEndian) { Array($0) }, for: catalogVersionKey, in: meta)
    }

    /// The indexes the catalog lists for `entity`, by name in key order, each with its uniqueness.
    static func catalogIndexes(
        of entity: String, in txn: some Transaction, meta: Database
    ) throws -> [(name: String, uniqueness: UniqueConflictPolicy?)] {
        var indexes: [(name: String, uniqueness: UniqueConflictPolicy?)] = []
        try txn.forEachEntry(in: meta, withPrefix: Array(IndexStorage.catalogPrefix(entity: entity).utf8)) {
            rest, value in
            let name = String(decoding: rest, as: UTF8.self)
            indexes.append((name, try IndexStorage.uniqueness(fromCatalogValue: value, entity: entity, index: name)))
        }
        return indexes
    }

    // MARK: - Maintenance

    /// Keeps `entity`'s indexes in step with one change of a record, inside the save's transaction.
    ///
    /// - Parameters:
    ///   - old: the record before the change (nil for an insert).
    ///   - new: the record after it (nil for a delete).
    ///   - changedFields: for an update, the top-level fields that changed (indexes on none of them are skipped).
    ///   - deferred: where the keys that can wait for the end of the save are held (see
    ///     `DeferredIndexPuts`); nil to put every key at once.
    static func updateIndexes(
        of entity: EntityStorage, id: [UInt8], old: UnsafeRawBufferPointer?, new: UnsafeRawBufferPointer?,
        changedFields: [String]?, in txn: WriteTransaction, deferring deferred: DeferredIndexPuts? = nil
    ) throws {
        let fields = entity.indexedFields
        if let changedFields, !changedFields.contains(where: fields.contains) { return }
        // Only the fields the indexes read are parsed: the others' structure is still checked.
        let before = try old.map { try RecordValue(record: $0, fields: fields) }
        let after = try new.map { try RecordValue(record: $0, fields: fields) }
        // A key removed must have been put first, should the save have added it. (After `old` is
        // read: it may point into the map, where puts move pages.)
        if old != nil, let deferred, !deferred.isEmpty { try deferred.flush(in: txn) }
        for index in entity.indexes {
            if let changedFields, !index.reads(anyOf: changedFields) { continue }
            let oldEntry = try before.map { try index.entry(for: $0, id: id, entity: entity.name) }
            let newEntry = try after.map { try index.entry(for: $0, id: id, entity: entity.name) }
            if oldEntry?.key == newEntry?.key { continue }
            if let oldEntry { try remove(oldEntry, from: index, in: txn) }
            guard let newEntry else { continue }
            if let deferred, index.uniqueness == nil, newEntry.key.count < IndexEntry.maxKeySize {
                deferred.hold(newEntry.key, for: index.database)
            } else {
                try insert(newEntry, into: index, in: txn)
            }
        }
    }

    /// Adds one record's entry to an index.
    ///
    /// A key shorter than the longest holds one identifier, its suffix. A key of the longest size
    /// can be the key of a record whose identifier ends the key exactly and of records whose
    /// identifiers only start there: their value then lists them all.
    static func insert(_ entry: IndexEntry, into index: IndexStorage, in txn: WriteTransaction) throws {
        guard entry.key.count == IndexEntry.maxKeySize else {
            try txn.put([], for: entry.key, in: index.database)
            return
        }
        var ids: [[UInt8]] = []
        if let existing = try txn.get(entry.key, in: index.database) {
            if existing.isEmpty {
                // The key already stands for the record whose identifier is its suffix.
                if !entry.isListed { return }
                ids = [Array(entry.key[entry.valuesLength...])]
            } else {
                ids = try IndexEntry.list(existing, index: index.name)
            }
        } else if !entry.isListed {
            try txn.put([], for: entry.key, in: index.database)
            return
        }
        let position = ids.firstIndex { !$0.lexicographicallyPrecedes(entry.id) } ?? ids.endIndex
        if position < ids.endIndex, ids[position] == entry.id { return }
        ids.insert(entry.id, at: position)
        try txn.put(IndexEntry.encodeList(ids), for: entry.key, in: index.database)
    }

    /// Removes one record's entry from an index (see `insert(_:into:in:)`).
    static func remove(_ entry: IndexEntry, from index: IndexStorage, in txn: WriteTransaction) throws {
        guard entry.key.count == IndexEntry.maxKeySize else {
            try txn.delete(entry.key, in: index.database)
            return
        }
        guard let existing = try txn.get(entry.key, in: index.database) else { return }
        if existing.isEmpty {
            // The key stands for the record whose identifier is its suffix, which is this one
            // unless this one's identifier was cut.
            if !entry.isListed { try txn.delete(entry.key, in: index.database) }
            return
        }
        var ids = try IndexEntry.list(existing, index: index.name)
        ids.removeAll { $0 == entry.id }
        if ids.isEmpty {
            try txn.delete(entry.key, in: index.database)
        } else {
            try txn.put(IndexEntry.encodeList(ids), for: entry.key, in: index.database)
        }
    }
}
