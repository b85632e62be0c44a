import Foundation
import RillLocks
import RillStorage
import Synchronization

/// A store directory opened by this process: the log, the projections and the entity catalog.
///
/// Layout (named databases, see `Documentation/OnDiskFormat.md`):
/// - `meta`: `format` → the store format version (UInt32, big-endian); `entity:<Name>` → the
///   entity's catalog entry; `fields:<Name>` → the field kinds a description declared (see
///   `EntityDeclaration`); `replica` → the replicated log the store follows, when it follows one.
/// - `log`: sequence number (UInt64, big-endian) → `LogEntry`.
/// - `records:<Name>`: identifier key → the record's current bytes (the projection).
///
/// A `Store` is shared by the container and its contexts; the CLI uses it directly, without model
/// types.
@usableFromInline
package final class Store: Sendable {
    /// The store format this version of Rill writes and reads. Format 2 cuts long values in index
    /// keys (format 1 could not index them); format 3 keeps in the log the record before each
    /// update and delete; format 4 keys a string identifier by its NFC form. An older store is raised
    /// to it when opened (see `upgradeFormat`).
    package static let formatVersion: UInt32 = 4

    /// The storage under the store; nothing above `Store` and `Log` reaches it.
    let environment: Environment
    package let directory: String
    let meta: Database
    /// The store's log of commits.
    package let log: Log
    /// Told how far index builds have come (see `StoreProgress`); nil for silence.
    let progress: (@Sendable (StoreProgress) -> Void)?
    /// Entities loaded from the catalog, and the catalog version they reflect.
    let catalog = Lock(Catalog())
    /// What each entity's records look like, learned for changes given as JSON (see `prepare`)
    /// and for the checks of text queries.
    let recordShapes = Lock(RecordShapes())
    /// The checks and plans of the text queries of each shape met (see `QueryShapeMemo`).
    let queryShapes = QueryShapeMemo()
    /// Each entity's key names as its last text query found them, for the next query's records
    /// (see `RecordKeyNames`).
    let recordKeyNames = Lock<[String: RecordKeyNames]>([:])
    /// Each entity's evolution as its current schema describes it, with the schema's stored
    /// bytes it was read from and the number of the read transaction that last found it so (see
    /// `evolution(of:in:)`).
    let evolutions = Lock<[String: (schema: [UInt8], evolution: RecordEvolution?, seen: UInt64?)]>([:])
    /// The last commit known to be on disk after a flush of this process (see `observableHead(in:)`).
    let flushedThrough = Atomic<UInt64>(0)
    /// One copy of each record's row for the live queries that hold it.
    let sharedRows = SharedRows()
    /// The replicated log the store's commits go to first, nil for the store's own log alone.
    package let replica: (any LogReplica)?
    /// The name of the replicated log the store follows (its `meta` mark), nil for none.
    let followedLog: String?
    /// Why the store and its replicated log were found to disagree, nil while they agree: every
    /// later save fails with it, until the store is opened again.
    let replicaDivergence = Lock<RillError?>(nil)

    struct Catalog {
        var entities: [String: EntityStorage] = [:]
    }

    /// Opens the store in `directory`.
    ///
    /// - Parameters:
    ///   - create: create the directory and an empty store when missing, or finish one whose creation was
    ///     cut short. When false, a directory without a store is an error (`.storeNotFound`, also for a
    ///     creation cut short: see `StoreCreationState`) and nothing is created.
    ///   - progress: told how far index builds have come, those of this call and of later declarations.
    package init(
        directory: String, options: StoreOptions, create: Bool,
        progress: (@Sendable (StoreProgress) -> Void)? = nil, replica: (any LogReplica)? = nil
    ) throws {
        self.directory = directory
        self.progress = progress
        self.replica = replica
        let options = options.environmentOptions(create: create)
        if !create, let state = StoreCreationState.beforeOpening(directory),
            let error = state.error(directory: directory, create: create)
        {
            throw error
        }
        do {
            environment = try Environment(directory: directory, options: options)
            let logDatabase: Database
            var existing = try environment.database(named: "meta", create: false)
            var state: StoreCreationState?
            if existing == nil {
                state = try StoreCreationState.withoutMeta(environment)
                // Another process may have finished creating the store since `meta` was looked
                // for: the databases it made are then the store's, not a foreign environment's.
                existing = try environment.database(named: "meta", create: false)
            }
            if let meta = existing {
                try Self.checkFormat(environment: environment, meta: meta, directory: directory)
                self.meta = meta
                // An existing store is opened without writing, so that a read-only one can be read.
                logDatabase =
                    try environment.database(named: "log", create: false)
                    ?? environment.database(named: "log", create: true)!
            } else {
                if let error = state?.error(directory: directory, create: create) { throw error }
                // One transaction, so that a store exists whole or not at all: a process killed before its
                // commit leaves an environment that never committed (see `StoreCreationState`). Write
                // transactions are serialized across processes, so of two processes creating the store at
                // once, the second finds the first one's and keeps it.
                (self.meta, logDatabase) = try environment.write { txn in
                    if let meta = try txn.database(named: "meta", create: false) {
                        return (meta, try txn.database(named: "log", create: true)!)
                    }
                    let meta = try txn.database(named: "meta", create: true)!
                    let log = try txn.database(named: "log", create: true)!
                    try txn.put(Self.formatMarker, for: Array("format".utf8), in: meta)
                    return (meta, log)
                }
            }
            log = Log(database: logDatabase, meta: meta, directory: directory, environment: environment)
            let meta = self.meta
            try Self.upgradeFormat(
                environment: environment, meta: meta, directory: directory, log: log, progress: progress)
            followedLog = try Self.markReplica(
                replica, environment: environment, meta: meta, readOnly: options.readOnly)
            let marked = try environment.read { txn in try txn.get(Array("format".utf8), in: meta) != nil }
            if !marked {
                // A store whose creation committed `meta` alone (Rill before creation took one transaction).
                try environment.write { txn in
                    if try txn.get(Array("format".utf8), in: meta) == nil {
                        try txn.put(Self.formatMarker, for: Array("format".utf8), in: meta)
                    }
                }
            }
        } catch {
            throw Self.translate(error, directory: directory)
        }
    }

    /// The format marker's value: `formatVersion`, big-endian.
    private static var formatMarker: [UInt8] { withUnsafeBytes(of: formatVersion.bigEndian) { Array($0) } }

    private static func checkFormat(environment: Environment, meta: Database, directory: String) throws {
        let version: UInt32? = try environment.read { txn in
            guard let raw = try txn.get(Array("format".utf8), in: meta) else { return nil }
            guard raw.count == 4 else {
                throw RillError(.corruptStore, "the format marker of \(directory) is \(raw.count) bytes, not 4")
            }
            return raw.reduce(0) { $0 << 8 | UInt32($1) }
        }
        if let version, version > formatVersion {
            throw RillError(
                .unsupportedFormat,
                "\(directory) has store format \(version); this version of Rill reads formats up to \(formatVersion). "
                    + "Open it with a newer Rill."
            )
        }
    }

    // MARK: - Entities

    /// Opens the storage of an entity, creating it and its catalog entry when missing, and
    /// building any of `indexes` (field paths of each index) that the store lacks, all in one write transaction
    /// (see `declare(_:)`); nothing is written when the store has the entity and the indexes already, each as
    /// unique as `uniqueness` (index name → policy) says.
    ///
    /// - Throws: `.invalidConfiguration` when the store already holds the entity with another kind of identifier;
    ///   `.uniqueConflict` when an index made unique finds two stored records sharing values.
    package func registerEntity(
        named name: String, identifierKind: IdentifierKind, indexes: [[[String]]] = [],
        uniqueness: [String: UniqueConflictPolicy] = [:], schema: EntitySchema? = nil,
        relationships: [RelationshipSchema] = []
    ) throws -> EntityStorage {
        var declaration = try EntityDeclaration(name: name, identifierKind: identifierKind, indexes: indexes)
        declaration.uniqueness = uniqueness
        declaration.schema = schema
        declaration.relationships = relationships
        if let stored = try entity(named: name) {
            guard stored.identifierKind == identifierKind else {
                throw RillError(
                    .invalidConfiguration,
                    "entity \(name) is stored with \(stored.identifierKind.name) identifiers, "
                        + "but the model's id is \(identifierKind.name)"
                )
            }
            let missing = declaration.indexNames.filter { index in
                !stored.indexes.contains { $0.name == index && $0.uniqueness == uniqueness[index] }
            }
            // Nothing is written when the store has the indexes and the same schema already.
            let sameSchema = try schema.map { schema in
                try self.schemaVersions(of: name).contains { $0.describesSame(as: schema) }
            }
            if missing.isEmpty, sameSchema ?? true, stored.relationships == relationships { return stored }
        }
        guard let storage = try declare([declaration])[name] else {
            throw RillError(.corruptStore, "entity \(name) vanished while it was registered")
        }
        return storage
    }

    /// The storage of an entity the store already holds, with all its indexes, or nil.
    package func entity(named name: String) throws -> EntityStorage? {
        if let known = catalog.withLock({ $0.entities[name] }) { return known }
        do {
            let meta = self.meta
            let (kind, indexes, version, relationships, hasReferences):
                (
                    IdentifierKind?, [(name: String, uniqueness: UniqueConflictPolicy?)], UInt64,
                    [RelationshipSchema], Bool
                ) = try environment.read { txn in
                    guard let raw = try txn.get(EntityStorage.catalogKey(for: name), in: meta) else {
                        return (nil, [], 0, [], false)
                    }
                    let kind = try EntityStorage.identifierKind(fromCatalogValue: raw, entity: name)
                    let indexes = try Self.catalogIndexes(of: name, in: txn, meta: meta)
                    return (
                        kind, indexes, try Self.catalogVersion(in: txn, meta: meta),
                        try Self.relationships(of: name, in: txn, meta: meta),
                        try txn.get(Self.referencesMarkerKey, in: meta) != nil
                    )
                }
            guard let kind,
                let database = try environment.database(named: EntityStorage.databaseName(for: name), create: false)
            else { return nil }
            var storage = EntityStorage(name: name, identifierKind: kind, database: database)
            storage.catalogVersion = version
            storage.relationships = relationships
            if hasReferences {
                storage.references = try environment.database(named: Self.referencesDatabaseName, create: false)
            }
            for (indexName, uniqueness) in indexes {
                let databaseName = IndexStorage.databaseName(entity: name, index: indexName)
                guard let indexDatabase = try environment.database(named: databaseName, create: false) else {
                    throw RillError(.corruptStore, "the catalog lists index \(name)(\(indexName)), but it is missing")
                }
                storage.indexes.append(
                    IndexStorage(
                        name: indexName, fieldPaths: IndexStorage.fieldPaths(fromName: indexName),
                        database: indexDatabase, uniqueness: uniqueness))
            }
            catalog.withLock { $0.entities[name] = storage }
            return storage
        } catch {
            throw Self.translate(error, directory: directory)
        }
    }

    /// The rest of every key of `database` that starts with `prefix`, in key order.
    static func keys(withPrefix prefix: String, in database: Database, txn: some Transaction) throws -> [String] {
        var names: [String] = []
        try txn.forEachEntry(in: database, withPrefix: Array(prefix.utf8)) { rest, _ in
            names.append(String(decoding: rest, as: UTF8.self))
        }
        return names
    }

    /// The names of all entities in the store, sorted.
    package func entityNames() throws -> [String] {
        let meta = self.meta
        return try withReadTransaction { txn in
            try Self.keys(withPrefix: EntityStorage.catalogPrefix, in: meta, txn: txn)
        }
    }

    // MARK: - Transactions

    /// Runs `body` with a snapshot of the store (one read transaction), translating storage errors.
    ///
    /// The snapshot ends when `body` returns; `body` is synchronous, so no read outlives an `await`.
    package func read<R>(_ body: (StoreSnapshot) throws -> R) throws -> R {
        try withReadTransaction { try body(StoreSnapshot($0)) }
    }

    /// Runs `body` in a read transaction, translating storage errors (for the store's own code).
    func withReadTransaction<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        do {
            return try environment.read(body)
        } catch {
            throw Self.translate(error, directory: directory)
        }
    }

    /// Runs `body` in a write transaction, translating storage errors (for the store's own code).
    func withWriteTransaction<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        do {
            return try environment.write(body)
        } catch {
            throw Self.translate(error, directory: directory)
        }
    }

    // MARK: - The file

    /// The store file, the same for every `Store` of this process on it.
    package var fileID: StoreFileID { StoreFileID(environment.fileID) }

    /// The longest identifier key a record may have, in bytes.
    package var maxKeySize: Int { environment.maxKeySize }

    /// The size of the memory map, in bytes (the most the file can grow to before the map grows).
    package var mapSize: Int { environment.mapSize }

    /// The size of the data file, in bytes.
    package var fileSize: Int { environment.fileSize }

    /// Writes every committed change to disk now (what a relaxed durability left unflushed).
    package func flush() throws {
        do {
            try environment.sync(force: true)
        } catch {
            throw Self.translate(error, directory: directory)
        }
    }

    /// The reader slots in use, of every process that has the store open: each with the process's
    /// id and the LMDB transaction it reads (nil for a slot kept between reads).
    package func readerSlots() -> [(pid: Int32, transaction: UInt64?)] {
        environment.readerSlots()
    }

    /// Clears the reader slots of processes that died inside a read; returns how many it cleared.
    package func clearStaleReaders() throws -> Int {
        try environment.checkReaders()
    }

    // MARK: - Errors

    /// What a permission error means: a read-only store written to, a store this process may not
    /// read, or one it may not open for writing.
    private static func permissionMessage(_ error: LMDBError, directory: String) -> String {
        if error.code == EROFS { return "\(directory) is read-only for this process: it can be read, not written" }
        // The storage layer's refusal to read without a writable lock file says why itself.
        if error.message.contains("lock.mdb") { return error.message }
        return "no permission to open \(directory) for writing"
    }

    /// A save's error when its commit's last write failed (see `EnvironmentFailure`): not
    /// acknowledged, possibly committed; the store reopened its files, or says why it could not.
    static func failedSave(_ failure: EnvironmentFailure, directory: String, commit: UInt64?) -> RillError {
        let save = commit.map { "the save that would have been commit \($0)" } ?? "a save"
        return RillError(
            .storeFailed,
            "\(save) to \(directory) failed: \(failure.cause). The save is not acknowledged, and it may still be "
                + "found committed after a restart, since the write may have reached the disk. "
                + stateAfter(failure), underlyingError: failure)
    }

    /// What the store does after a failed commit's last write.
    private static func stateAfter(_ failure: EnvironmentFailure) -> String {
        if failure.recovered { return "The store reopened its files and serves again." }
        return "Reopening the store's files failed (\(failure.reopenError ?? "unknown reason")): every use of "
            + "it fails until it is opened again."
    }

    /// Turns a storage error into a `RillError` that names the store.
    static func translate(_ error: any Error, directory: String) -> any Error {
        if let failure = error as? EnvironmentFailure {
            return RillError(
                .storeFailed, "\(directory) failed: \(failure.cause). \(stateAfter(failure))",
                underlyingError: failure)
        }
        guard let error = error as? LMDBError else { return error }
        switch error.code {
        case ENOENT:
            return RillError(.storeNotFound, "no store at \(directory)", underlyingError: error)
        case ENOTDIR:
            return RillError(.notAStore, "\(directory) is not a directory", underlyingError: error)
        case EACCES, EPERM, EROFS:
            return RillError(.permissionDenied, permissionMessage(error, directory: directory), underlyingError: error)
        case ENOSPC, EDQUOT:
            return RillError(
                .diskFull, "the disk holding \(directory) is full (\(error.message))", underlyingError: error)
        case EIO:
            // LMDB reports a short write (a disk that filled during it) as EIO, as it does a device's error.
            return RillError(
                .diskFull, "the disk holding \(directory) is full or failed a write (\(error.message))",
                underlyingError: error)
        case LMDBError.panic.code:
            return RillError(
                .storeFailed, "\(directory) failed a write and was not reopened: \(error.message)",
                underlyingError: error)
        case LMDBError.invalid.code:
            return RillError(.notAStore, "\(directory) does not hold a valid store file", underlyingError: error)
        case LMDBError.corrupted.code:
            return RillError(
                .corruptStore, "the store in \(directory) is damaged: \(error.message)", underlyingError: error)
        case LMDBError.versionMismatch.code:
            return RillError(
                .unsupportedFormat, "\(directory) was written by another LMDB version", underlyingError: error)
        case LMDBError.databasesFull.code:
            return RillError(
                .storage,
                "a store holds at most \(EnvironmentOptions().maxDatabases - 2) entities and indexes together "
                    + "(each takes one database), and \(directory) has reached it",
                underlyingError: error)
        case LMDBError.badValueSize.code:
            return RillError(.invalidIdentifier, error.message, underlyingError: error)
        default:
            return RillError(.storage, "storage failure in \(directory): \(error.message)", underlyingError: error)
        }
    }
}
