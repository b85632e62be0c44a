import Foundation

/// The store of an app's models, and the factory of the contexts that read and write it.
///
/// Create one container per store and share it; contexts made from it see each other's saves.
/// Opening the same store twice in one process is safe: both containers share one open store
/// file.
///
/// For example:
///
/// ```swift
/// let container = try ModelContainer(
///     for: Book.self, Author.self,
///     configurations: ModelConfiguration(url: URL(filePath: "library.rill"))
/// )
/// let context = container.mainContext
/// ```
public final class ModelContainer: Sendable {
    /// The configuration of the container's store.
    public let configurations: [ModelConfiguration]
    /// The model types the container was created for.
    public let modelTypes: [any PersistentModel.Type]
    /// A context shared by everyone who asks for it; see ``ModelContext`` for its thread safety.
    ///
    /// On Linux there is no main run loop to tie it to, so unlike SwiftData's it is not bound to
    /// the main actor: it is a ``ModelContext`` like any other, safe to use from any thread.
    ///
    /// Every access returns a context sharing the same staged changes, so
    /// `container.mainContext.insert(x)` followed by `try container.mainContext.save()` saves `x`.
    public var mainContext: ModelContext { ModelContext(container: self, core: mainContextCore) }

    package let store: Store
    let entitiesByName: [String: EntityStorage]
    let allowsSave: Bool
    let modelTypeNames: Set<String>
    /// The families of the model types, by their base type (``ModelFamily``).
    let familiesByBase: [ObjectIdentifier: ModelFamily]
    private let mainContextCore = ModelContext.Core()
    private let removesStoreOnDeinit: Bool
    /// Applies the replicated log's commits to the store, when the configuration names one.
    private let follower: ReplicaFollower?

    /// Opens (or creates) the store described by `configurations` for the given model types.
    ///
    /// - Parameters:
    ///   - forTypes: the model types to store. Each entity name must be unique.
    ///   - configurations: one configuration; with none, the default store (see
    ///     ``ModelConfiguration/defaultDirectory``).
    ///   - progress: told how far the index builds of this call have come (see ``StoreProgress``); silent by default.
    /// - Throws: ``RillError`` when the store cannot be opened: the location is a plain file
    ///   (`.notAStore`), was written by a newer Rill (`.unsupportedFormat`), cannot be created or
    ///   written (`.permissionDenied`), or already stores an entity with another identifier type.
    public convenience init(
        for forTypes: any PersistentModel.Type..., configurations: ModelConfiguration...,
        progress: (@Sendable (StoreProgress) -> Void)? = nil
    ) throws {
        try self.init(for: forTypes, configurations: configurations, progress: progress)
    }

    /// Opens (or creates) the store described by `configurations` for the given model types.
    ///
    /// - Parameters:
    ///   - types: the model types to store (with those of the configuration's ``ModelConfiguration/schema``).
    ///     Each entity name must be unique.
    ///   - configurations: one configuration; with none, the default store.
    ///   - progress: told how far the index builds of this call have come: indexes a model declares that the
    ///     store lacks are built from the records it holds, which can take a while (see ``StoreProgress``).
    ///     Nothing is reported by default; Rill never writes to standard error.
    public init(
        for types: [any PersistentModel.Type], configurations: [ModelConfiguration],
        progress: (@Sendable (StoreProgress) -> Void)? = nil
    ) throws {
        guard configurations.count <= 1 else {
            throw RillError(
                .invalidConfiguration, "a container opens one store; \(configurations.count) configurations were given")
        }
        let configuration = configurations.first ?? ModelConfiguration()
        // The configuration's schema adds its types (SwiftData stores them in its store).
        var forTypes = types
        for type in configuration.schema?.types ?? [] where !forTypes.contains(where: { $0 == type }) {
            forTypes.append(type)
        }
        var seen: [String: any PersistentModel.Type] = [:]
        for type in forTypes {
            // The kinds of a family share its entity name.
            if let other = seen[type.entityName], other != type,
                type.family == nil || other.family?.entityName != type.family?.entityName
            {
                throw RillError(
                    .invalidConfiguration,
                    "\(type) and \(other) have the same entity name \"\(type.entityName)\"")
            }
            seen[type.entityName] = type
        }
        let options = StoreOptions(
            durability: configuration.durability.storeDurability,
            initialMapSize: configuration.initialMapSize,
            readOnly: !configuration.allowsSave
        )
        var replica: (any LogReplica)?
        if let log = configuration.log {
            guard configuration.allowsSave else {
                throw RillError(
                    .invalidConfiguration,
                    "a container on the replicated log \(log) applies its commits: it must allow saving")
            }
            replica = try log.open()
        }
        let store = try Store(
            directory: configuration.url.path, options: options, create: configuration.allowsSave, progress: progress,
            replica: replica)
        if replica != nil {
            // What the log holds beyond the store, before the first fetch; a log that does not answer
            // now is caught up with by the follower once it does.
            do { try store.catchUpWithReplica() } catch let error as RillError
                where error.code == .replicationUnavailable
            {}
        }
        var entities: [String: EntityStorage] = [:]
        var families: [ObjectIdentifier: ModelFamily] = [:]
        for type in forTypes {
            if let family = type.family {
                // One registration for the whole family, whichever of its kinds were passed.
                if entities[family.entityName] != nil { continue }
                entities[family.entityName] = try Self.register(
                    family, of: type, in: store, allowsSave: configuration.allowsSave)
                families[family.base] = family
                continue
            }
            if let problem = type.evolutionProblems.first {
                throw RillError(.invalidConfiguration, "\(type.entityName)'s evolution: \(problem)")
            }
            if let problem = type.relationshipProblems.first {
                throw RillError(.invalidConfiguration, "\(type.entityName)'s relationships: \(problem)")
            }
            if let problem = type.identityProblem { throw RillError(.invalidConfiguration, problem) }
            guard let kind = type.identifierKind else {
                throw RillError(
                    .invalidConfiguration,
                    "\(type.entityName)'s id is \(type.identifierTypeName); a model's id is a UUID, String, Int or Int64"
                )
            }
            entities[type.entityName] = try type.openEntity(
                in: store, identifierKind: kind, allowsSave: configuration.allowsSave)
        }
        self.store = store
        self.configurations = [configuration]
        self.modelTypes = forTypes
        self.modelTypeNames = Set(forTypes.map { $0.entityName })
        self.entitiesByName = entities
        self.familiesByBase = families
        self.allowsSave = configuration.allowsSave
        self.removesStoreOnDeinit = configuration.isStoredInMemoryOnly
        self.follower = replica.map { _ in ReplicaFollower(store) }
    }

    deinit {
        follower?.stop()
        if removesStoreOnDeinit {
            let path = store.directory
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// Checks `family` (that `type` names) and registers its entity: the kinds' indexes and the
    /// discriminator's, and the family's schema.
    private static func register(
        _ family: ModelFamily, of type: any PersistentModel.Type, in store: Store, allowsSave: Bool
    ) throws -> EntityStorage? {
        var problems = family.problems
        if family.kind(of: type) == nil {
            problems.insert("\(type) names family \(family.entityName), which does not list it among its kinds", at: 0)
        }
        for kind in family.kinds {
            problems += kind.type.evolutionProblems.map { "\(kind.type)'s evolution: \($0)" }
            if let problem = kind.type.identityProblem { problems.append(problem) }
        }
        if let problem = problems.first { throw RillError(.invalidConfiguration, problem) }
        guard let kind = family.identifierKind else {
            throw RillError(
                .invalidConfiguration,
                "\(family.entityName)'s id is \(type.identifierTypeName); a model's id is a UUID, String, Int or Int64")
        }
        guard allowsSave else { return try store.entity(named: family.entityName) }
        return try store.registerEntity(
            named: family.entityName, identifierKind: kind, indexes: family.indexFieldPaths, schema: family.schema,
            relationships: family.kinds.first?.type.relationshipSchemas ?? [])
    }

    // MARK: - Facts

    /// Writes every saved change to disk now.
    ///
    /// With ``ModelConfiguration/Durability/full`` (the default) saves are on disk when they
    /// return and this does nothing useful. With `.relaxed` it bounds what a power cut can lose:
    /// every save that returned before `flush()` survives one. With `.unsynced` that holds only
    /// until the next save: a power cut after later saves may leave the store damaged (see
    /// ``ModelConfiguration/Durability/unsynced``).
    public func flush() throws {
        try store.flush()
    }

    /// The sequence number of the last commit in the store's log (0 when empty).
    ///
    /// On a replicated log (``ModelConfiguration/log``), the last commit this node has applied:
    /// what its queries answer from.
    public func lastSequence() throws -> UInt64 {
        try store.head()
    }

    /// Why this node stopped applying its replicated log's commits, nil while it applies them (or
    /// has no replicated log).
    ///
    /// A log that does not answer is no failure: the node retries, its queries answer from what it
    /// holds, and its saves fail with ``RillError/Code/replicationUnavailable`` meanwhile. A log
    /// that disagrees with the store (``RillError/Code/replicationDiverged``) stops it for good.
    public var replicationFailure: RillError? { follower?.failure }

    // MARK: - Errors

    /// The error for a model type the container was not opened for (`type`, as the caller names
    /// it): the one message of every path that needs the type among the container's.
    static func unregisteredModelError(_ type: String) -> RillError {
        RillError(.unknownEntity, "\(type) is not one of this container's model types; pass it to ModelContainer(for:)")
    }
}

extension PersistentModel {
    /// The field paths of each declared index.
    static var indexFieldPaths: [[[String]]] { indexes.map(\.fieldPaths) }

    /// The declared unique indexes, by catalog name, with their policies.
    static var uniqueIndexes: [String: UniqueConflictPolicy] {
        var unique: [String: UniqueConflictPolicy] = [:]
        for index in indexes { if let policy = index.uniqueness { unique[index.name] = policy } }
        return unique
    }

    /// What is wrong with the model's ``PersistentModel/evolution``, for the container to refuse it.
    static var evolutionProblems: [String] { evolution.problems }

    /// What is wrong with the model's ``PersistentModel/relationships``, for the container to refuse them.
    static var relationshipProblems: [String] {
        var problems = relationships.compactMap(\.problem)
        var seen: Set<String> = []
        for relationship in relationships where !seen.insert(relationship.schema.field).inserted {
            problems.append("\(relationship.schema.field) is declared twice")
        }
        return problems
    }

    /// The relationships as the catalog keeps them.
    static var relationshipSchemas: [RelationshipSchema] { relationships.map(\.schema) }

    /// The schema the model type's `init(from:)` reads (see `ModelSchemaProbe`), with its
    /// indexes; nil when the probe cannot decode the type.
    static var probedSchema: EntitySchema? {
        guard let probed = ModelSchemaProbe.schema(of: Self.self) else { return nil }
        let indexNames = indexFieldPaths.map(FieldPath.name(of:))
        var schema = EntitySchema(kinds: probed.kinds, optional: probed.optional, indexes: indexNames)
        (schema.defaulted, schema.defaults, schema.renamed) = evolution.schemaFields
        schema.unique = uniqueIndexes
        return schema
    }

    /// The name of the model's identifier type, for messages.
    static var identifierTypeName: String { "\(ID.self)" }

    /// The kind of the model's identifier; nil for a type that conforms to `ModelIdentifier`
    /// without being one of the four Rill stores.
    static var identifierKind: IdentifierKind? {
        switch ID.self {
        case is UUID.Type: .uuid
        case is String.Type: .string
        case is Int.Type, is Int64.Type: .integer
        default: nil
        }
    }
}
