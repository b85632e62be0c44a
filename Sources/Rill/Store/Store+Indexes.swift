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
    /// index behind. On a terminal, a build that takes more than a second reports its progress on standard error.
    static func buildIndex(
        named name: String, of entity: EntityStorage, in txn: WriteTransaction, meta: Database
    ) throws -> IndexStorage {
        let databaseName = IndexStorage.databaseName(entity: entity.name, index: name)
        let database = try txn.database(named: databaseName, create: true)!
        let index = IndexStorage(name: name, fieldPaths: IndexStorage.fieldPaths(fromName: name), database: database)
        let progress = BuildProgress(label: "building index \(entity.name)(\(name))")
        try txn.removeAll(from: database)
        let total = try txn.count(of: entity.database)
        var done = 0
        try txn.withCursor(entity.database) { cursor in
            var current = try cursor.first()
            while let entry = current {
                let record = try RecordValue(record: entry.value)
                let id = Array(entry.key)
                let key = try index.key(for: record, id: id, entity: entity.name)
                try put(key, of: record, in: index, entity: entity.name, id: id, txn: txn)
                done += 1
                if done & 1023 == 0 { progress.report(done, of: total) }
                current = try cursor.next()
            }
        }
        try txn.put([1], for: Array((IndexStorage.catalogPrefix(entity: entity.name) + name).utf8), in: meta)
        let version = try catalogVersion(in: txn, meta: meta) + 1
        try txn.put(withUnsafeBytes(of: version.bigEndian) { Array($0) }, for: catalogVersionKey, in: meta)
        progress.finish(done)
        return index
    }

    // MARK: - Maintenance

    /// Keeps `entity`'s indexes in step with one change of a record, inside the save's transaction.
    ///
    /// - Parameters:
    ///   - old: the record before the change (nil for an insert).
    ///   - new: the record after it (nil for a delete).
    ///   - changedFields: for an update, the top-level fields that changed (indexes on none of them are skipped).
    static func updateIndexes(
        of entity: EntityStorage, id: [UInt8], old: UnsafeRawBufferPointer?, new: UnsafeRawBufferPointer?,
        changedFields: [String]?, in txn: WriteTransaction
    ) throws {
        let affected = entity.indexes.filter { index in
            guard let changedFields else { return true }
            return changedFields.contains { index.topLevelFields.contains($0) }
        }
        guard !affected.isEmpty else { return }
        let before = try old.map { try RecordValue(record: $0) }
        let after = try new.map { try RecordValue(record: $0) }
        for index in affected {
            let oldKey = try before.map { try index.key(for: $0, id: id, entity: entity.name) }
            let newKey = try after.map { try index.key(for: $0, id: id, entity: entity.name) }
            if oldKey == newKey { continue }
            if let oldKey { try txn.delete(oldKey, in: index.database) }
            if let newKey, let after { try put(newKey, of: after, in: index, entity: entity.name, id: id, txn: txn) }
        }
    }

    /// Stores the key of `record` in `index`; a key LMDB cannot hold is an error naming the
    /// record, the index and how long each indexed value made it.
    private static func put(
        _ key: [UInt8], of record: RecordValue, in index: IndexStorage, entity: String, id: [UInt8],
        txn: WriteTransaction
    ) throws {
        do {
            try txn.put([], for: key, in: index.database)
        } catch let error as LMDBError where error.code == LMDBError.badValueSize.code {
            let name = id.withUnsafeBytes { AnyIdentifier(storageKey: $0) }.map { "\($0)" } ?? "with a damaged id"
            let sizes = index.fieldPaths.map { path in
                var encoded: [UInt8] = []
                try? IndexKey.append(QueryEvaluator.read(path, from: record), to: &encoded)
                return "`\(path.joined(separator: "."))` \(encoded.count) bytes"
            }
            throw RillError(
                .invalidRecord,
                "\(entity) \(name) does not fit the index \(entity)(\(index.name)): its key would be \(key.count) "
                    + "bytes (\(sizes.joined(separator: ", ")), the identifier \(id.count)), "
                    + "and index keys hold at most \(txn.maxKeySize)",
                underlyingError: error)
        }
    }
}

/// Progress of a long operation, on standard error when it is a terminal, after a second.
final class BuildProgress: @unchecked Sendable {
    // Used from one thread (the writer) at a time.
    private let label: String
    private let start = Date()
    private var lastReport = Date.distantPast
    private var shown = false
    private let isTerminal = isatty(STDERR_FILENO) != 0

    init(label: String) { self.label = label }

    func report(_ done: Int, of total: Int) {
        guard isTerminal else { return }
        let now = Date()
        guard now.timeIntervalSince(start) > 1, now.timeIntervalSince(lastReport) > 0.25 else { return }
        lastReport = now
        shown = true
        let percent = total > 0 ? done * 100 / total : 100
        FileHandle.standardError.write(Data("\r\(label): \(done) of \(total) records (\(percent)%)".utf8))
    }

    func finish(_ done: Int) {
        guard shown else { return }
        let seconds = String(format: "%.1f", Date().timeIntervalSince(start))
        FileHandle.standardError.write(Data("\r\(label): \(done) records in \(seconds) s\u{1B}[K\n".utf8))
    }
}
