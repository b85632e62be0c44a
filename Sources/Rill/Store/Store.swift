import Foundation
import RillStorage
import Synchronization

/// A store directory opened by this process: the log, the projections and the entity catalog.
///
/// Layout (named databases, see `Documentation/OnDiskFormat.md`):
/// - `meta`: `format` → the store format version (UInt32, big-endian); `entity:<Name>` → the
///   entity's catalog entry.
/// - `log`: sequence number (UInt64, big-endian) → `LogEntry`.
/// - `records:<Name>`: identifier key → the record's current bytes (the projection).
///
/// A `Store` is shared by the container and its contexts; the CLI uses it directly, without model
/// types.
package final class Store: Sendable {
    /// The store format this version of Rill writes and reads.
    package static let formatVersion: UInt32 = 1

    package let environment: Environment
    package let directory: String
    package let meta: Database
    package let log: Database
    private let entities = Mutex<[String: EntityStorage]>([:])

    /// Opens the store in `directory`.
    ///
    /// - Parameters:
    ///   - create: create the directory and an empty store when missing. When false, a directory
    ///     without a store is an error and nothing is created.
    package init(directory: String, options: EnvironmentOptions, create: Bool) throws {
        self.directory = directory
        var options = options
        options.createIfMissing = create
        if !create {
            var isDirectory: ObjCBool = false
            if !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
                throw RillError(.storeNotFound, "no store at \(directory)")
            }
            if isDirectory.boolValue, !FileManager.default.fileExists(atPath: directory + "/data.mdb") {
                throw RillError(.storeNotFound, "no store at \(directory) (the directory has no data.mdb)")
            }
        }
        do {
            environment = try Environment(directory: directory, options: options)
            if let meta = try environment.database(named: "meta", create: false) {
                try Self.checkFormat(environment: environment, meta: meta, directory: directory)
                self.meta = meta
            } else {
                guard create else {
                    throw RillError(.notAStore, "\(directory) holds an LMDB environment that is not a Rill store")
                }
                guard try environment.databaseNames().isEmpty else {
                    throw RillError(.notAStore, "\(directory) holds an LMDB environment that is not a Rill store")
                }
                self.meta = try environment.database(named: "meta", create: true)!
            }
            log = try environment.database(named: "log", create: true)!
            let meta = self.meta
            try environment.write { txn in
                if try txn.get(Array("format".utf8), in: meta) == nil {
                    let version = withUnsafeBytes(of: Self.formatVersion.bigEndian) { Array($0) }
                    try txn.put(version, for: Array("format".utf8), in: meta)
                }
            }
        } catch {
            throw Self.translate(error, directory: directory)
        }
    }

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

    /// Opens the storage of an entity, creating it and its catalog entry when missing.
    ///
    /// - Throws: `.invalidConfiguration` when the store already holds the entity with another kind of identifier.
    package func registerEntity(named name: String, identifierKind: IdentifierKind) throws -> EntityStorage {
        if let known = entities.withLock({ $0[name] }), known.identifierKind == identifierKind { return known }
        do {
            let catalogKey = EntityStorage.catalogKey(for: name)
            let meta = self.meta
            if let stored = try self.entity(named: name), stored.identifierKind != identifierKind {
                throw RillError(
                    .invalidConfiguration,
                    "entity \(name) is stored with \(stored.identifierKind.name) identifiers, "
                        + "but the model's id is \(identifierKind.name)"
                )
            }
            let database = try environment.database(named: EntityStorage.databaseName(for: name), create: true)!
            try environment.write { txn in
                if try txn.get(catalogKey, in: meta) == nil {
                    try txn.put(EntityStorage.catalogValue(identifierKind: identifierKind), for: catalogKey, in: meta)
                }
            }
            let storage = EntityStorage(name: name, identifierKind: identifierKind, database: database)
            entities.withLock { $0[name] = storage }
            return storage
        } catch {
            throw Self.translate(error, directory: directory)
        }
    }

    /// The storage of an entity the store already holds, or nil.
    package func entity(named name: String) throws -> EntityStorage? {
        if let known = entities.withLock({ $0[name] }) { return known }
        do {
            let meta = self.meta
            let kind: IdentifierKind? = try environment.read { txn in
                guard let raw = try txn.get(EntityStorage.catalogKey(for: name), in: meta) else { return nil }
                return try EntityStorage.identifierKind(fromCatalogValue: raw, entity: name)
            }
            guard let kind,
                let database = try environment.database(named: EntityStorage.databaseName(for: name), create: false)
            else { return nil }
            let storage = EntityStorage(name: name, identifierKind: kind, database: database)
            entities.withLock { $0[name] = storage }
            return storage
        } catch {
            throw Self.translate(error, directory: directory)
        }
    }

    /// The names of all entities in the store, sorted.
    package func entityNames() throws -> [String] {
        let meta = self.meta
        return try read { txn in
            var names: [String] = []
            let prefix = Array(EntityStorage.catalogPrefix.utf8)
            try txn.withCursor(meta) { cursor in
                var entry = try cursor.seek(atOrAfter: prefix)
                while let current = entry, current.key.starts(with: prefix) {
                    names.append(String(decoding: current.key.dropFirst(prefix.count), as: UTF8.self))
                    entry = try cursor.next()
                }
            }
            return names
        }
    }

    // MARK: - Transactions

    /// Runs `body` in a read transaction, translating storage errors.
    package func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        do {
            return try environment.read(body)
        } catch {
            throw Self.translate(error, directory: directory)
        }
    }

    /// Runs `body` in a write transaction, translating storage errors.
    package func write<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        do {
            return try environment.write(body)
        } catch {
            throw Self.translate(error, directory: directory)
        }
    }

    // MARK: - Errors

    /// Turns a storage error into a `RillError` that names the store.
    package static func translate(_ error: any Error, directory: String) -> any Error {
        guard let error = error as? LMDBError else { return error }
        switch error.code {
        case ENOENT:
            return RillError(.storeNotFound, "no store at \(directory)", underlyingError: error)
        case ENOTDIR:
            return RillError(.notAStore, "\(directory) is not a directory", underlyingError: error)
        case EACCES, EPERM, EROFS:
            return RillError(
                .permissionDenied, "no permission to open \(directory) for writing", underlyingError: error)
        case ENOSPC, EIO, EDQUOT:
            return RillError(
                .diskFull, "the disk holding \(directory) is full or failed a write", underlyingError: error)
        case LMDBError.invalid.code:
            return RillError(.notAStore, "\(directory) does not hold a valid store file", underlyingError: error)
        case LMDBError.versionMismatch.code:
            return RillError(
                .unsupportedFormat, "\(directory) was written by another LMDB version", underlyingError: error)
        case LMDBError.badValueSize.code:
            return RillError(.invalidIdentifier, error.message, underlyingError: error)
        default:
            return RillError(.storage, "storage failure in \(directory): \(error.message)", underlyingError: error)
        }
    }
}
