import Foundation
import RillLocks
import RillStorage

extension Store {
    // MARK: - Declaring entities

    /// Applies `declarations` in one write transaction of their own (a model container's registration of its
    /// types): all of them, or, when one fails, none.
    ///
    /// - Returns: the storage of each declared entity, by name.
    package func declare(_ declarations: [EntityDeclaration]) throws -> [String: EntityStorage] {
        guard !declarations.isEmpty else { return [:] }
        let (meta, directory, progress) = (self.meta, self.directory, self.progress)
        do {
            let declared = try environment.write { txn in
                var declared: [String: EntityStorage] = [:]
                for declaration in declarations {
                    declared[declaration.name] = try Self.apply(
                        declaration, in: txn, meta: meta, directory: directory, progress: progress)
                }
                return declared
            }
            forgetDeclared(declarations)
            return declared
        } catch {
            throw Self.translate(error, directory: directory)
        }
    }

    /// Drops what this process remembers of declared entities once their transaction committed: their catalog
    /// entries (the indexes and the catalog version changed) and their shapes (the declared fields did).
    func forgetDeclared(_ declarations: [EntityDeclaration]) {
        guard !declarations.isEmpty else { return }
        catalog.withLock { catalog in
            for declaration in declarations { catalog.entities[declaration.name] = nil }
        }
        recordShapes.withLock { shapes in
            for declaration in declarations { shapes.byEntity[declaration.name] = nil }
        }
    }

    /// Applies one declaration inside `txn`: creates the entity's catalog entry and projection when missing,
    /// creates and builds each declared index it lacks (bumping the catalog version, so that other processes'
    /// saves reload the entity before they write), and keeps the declared field kinds.
    ///
    /// Everything it writes is in `txn`, and it derives everything from `txn`, so a replay after the map grew is
    /// exact and an abort leaves nothing behind.
    ///
    /// - Returns: the entity's storage as `txn` leaves it, with the catalog version `txn` leaves.
    /// - Throws: `RillError(.invalidConfiguration)` when the store holds the entity with another identifier kind,
    ///   declared field kinds that its records or its model's schema contradict (`checkDeclaredKinds`), or an
    ///   existing record has a value an index cannot hold; errors name `declaration.source` when it is set.
    static func apply(
        _ declaration: EntityDeclaration, in txn: WriteTransaction, meta: Database, directory: String,
        progress: (@Sendable (StoreProgress) -> Void)?
    ) throws -> EntityStorage {
        do {
            try declaration.whenApplied?(txn)
            let name = declaration.name
            let catalogKey = EntityStorage.catalogKey(for: name)
            if let raw = try txn.get(catalogKey, in: meta) {
                let stored = try EntityStorage.identifierKind(fromCatalogValue: raw, entity: name)
                guard stored == declaration.identifierKind else {
                    throw RillError(
                        .invalidConfiguration,
                        "entity \(name) is stored with \(stored.name) identifiers, "
                            + "but it is declared with \(declaration.identifierKind.name) identifiers")
                }
                if let fields = declaration.fields {
                    try checkDeclaredKinds(fields, of: name, in: txn, meta: meta)
                }
            } else {
                try txn.put(
                    EntityStorage.catalogValue(identifierKind: declaration.identifierKind), for: catalogKey, in: meta)
            }
            _ = try txn.database(named: EntityStorage.databaseName(for: name), create: true)!
            guard var storage = try storage(named: name, in: txn, meta: meta) else {
                throw RillError(.corruptStore, "entity \(name) vanished while it was declared")
            }
            for indexName in declaration.indexNames {
                let uniqueness = declaration.uniqueness?[indexName]
                guard let position = storage.indexes.firstIndex(where: { $0.name == indexName }) else {
                    storage.indexes.append(
                        try buildIndex(
                            named: indexName, of: storage, uniqueness: uniqueness, in: txn, meta: meta,
                            progress: progress))
                    continue
                }
                // A declaration that says which indexes are unique (a model type's) decides for the indexes it
                // declares, so that a model dropping a constraint drops it.
                guard declaration.uniqueness != nil, storage.indexes[position].uniqueness != uniqueness else {
                    continue
                }
                try setUniqueness(uniqueness, of: storage.indexes[position], entity: storage, in: txn, meta: meta)
                storage.indexes[position].uniqueness = uniqueness
            }
            if let relationships = declaration.relationships {
                storage = try keepRelationships(relationships, of: storage, in: txn, meta: meta)
            }
            storage.catalogVersion = try catalogVersion(in: txn, meta: meta)
            if let fields = declaration.fields {
                try keepDeclaredShape(fields, of: name, in: txn, meta: meta)
            }
            if let schema = declaration.schema {
                _ = try keepSchema(schema, of: name, in: txn, meta: meta)
            }
            return storage
        } catch {
            throw Self.error(error, at: declaration.source, directory: directory)
        }
    }

    /// The storage of `name` as `txn` sees it, with its indexes and relationships; nil when the
    /// store has no such entity.
    static func storage(named name: String, in txn: WriteTransaction, meta: Database) throws -> EntityStorage? {
        guard let raw = try txn.get(EntityStorage.catalogKey(for: name), in: meta) else { return nil }
        let kind = try EntityStorage.identifierKind(fromCatalogValue: raw, entity: name)
        guard let records = try txn.database(named: EntityStorage.databaseName(for: name), create: false) else {
            return nil
        }
        var storage = EntityStorage(name: name, identifierKind: kind, database: records)
        for (indexName, uniqueness) in try catalogIndexes(of: name, in: txn, meta: meta) {
            let databaseName = IndexStorage.databaseName(entity: name, index: indexName)
            guard let database = try txn.database(named: databaseName, create: false) else {
                throw RillError(.corruptStore, "the catalog lists index \(name)(\(indexName)), but it is missing")
            }
            storage.indexes.append(
                IndexStorage(
                    name: indexName, fieldPaths: IndexStorage.fieldPaths(fromName: indexName), database: database,
                    uniqueness: uniqueness))
        }
        storage.relationships = try relationships(of: name, in: txn, meta: meta)
        storage.references = try referencesDatabase(in: txn, meta: meta)
        storage.catalogVersion = try catalogVersion(in: txn, meta: meta)
        return storage
    }

    /// `error` naming where its cause came from (`line 7 of books.ndjson: …`), a storage error translated first;
    /// other errors (a save's internal signals) unchanged.
    static func error(_ error: any Error, at source: String?, directory: String) -> any Error {
        guard let source, let error = translate(error, directory: directory) as? RillError else { return error }
        return RillError(error.code, "\(source): \(error.message)", underlyingError: error.underlyingError)
    }
}
