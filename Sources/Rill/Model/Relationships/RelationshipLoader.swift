import Foundation

/// Reads the models related to others, in one snapshot of the store: the model a reference names,
/// and the models whose references name a given one (through the reference index).
///
/// Used to prefetch a fetch's relationships and to evaluate predicates that look through them. A
/// model it read once is kept for the rest of its use, so that a list whose models share related
/// models reads each of those once.
@usableFromInline
final class RelationshipLoader {
    let store: Store
    let snapshot: StoreSnapshot
    /// The commit being applied by a live query's follower, when records are read as of it
    /// rather than as of the snapshot (which may be a later commit of the batch).
    let commit: CommitContext?
    /// Decoded models, by entity and identifier key (nil: known to be missing).
    private var models: [String: [[UInt8]: Any?]] = [:]
    /// Schema-less records read for text queries, by entity and identifier key (nil: missing).
    private var records: [String: [[UInt8]: RecordValue?]] = [:]
    /// How each entity's records of earlier versions read as its current schema (nil: as stored).
    private var evolutions: [String: RecordEvolution?] = [:]
    private var entities: [String: EntityStorage?] = [:]

    /// The loader a fetch made within a read of the past uses, rather than one reading its
    /// snapshot's related models (`MaintainedQuery.loadWindow(before:)`: a fetch as of a commit,
    /// a live query resumed since one).
    @TaskLocal static var reading: Reading?

    /// A loader as `reading` holds it. `@unchecked Sendable`: it is set and used by the one
    /// thread that runs the read, inside `withValue`.
    final class Reading: @unchecked Sendable {
        let loader: RelationshipLoader
        init(_ loader: RelationshipLoader) { self.loader = loader }
    }

    init(store: Store, snapshot: StoreSnapshot, commit: CommitContext? = nil) {
        self.store = store
        self.snapshot = snapshot
        self.commit = commit
    }

    /// The stored record of `entity` with key `key`, as of the commit (or the snapshot).
    func record(of entity: EntityStorage, key: [UInt8]) throws -> [UInt8]? {
        if let commit, let changed = try commit.changedRecord(of: entity.name, key: key) { return changed }
        return try snapshot.record(of: entity, key: key).map { Array($0) }
    }

    private func entity(_ name: String) throws -> EntityStorage? {
        if let known = entities[name] { return known }
        let found = try store.entity(named: name)
        entities[name] = found
        return found
    }

    /// The kind of identifier of the entity `name`; nil when the store has no such entity.
    func identifierKind(of name: String) throws -> IdentifierKind? { try entity(name)?.identifierKind }

    /// The record of the entity `name` with identifier key `key`, schema-less, as of the commit
    /// (or the snapshot), read as the entity's current schema says (see `RecordEvolution`); nil
    /// when there is none.
    func recordValue(of name: String, key: [UInt8]) throws -> RecordValue? {
        if let known = records[name]?[key] { return known }
        var found: RecordValue?
        if let entity = try entity(name), let bytes = try record(of: entity, key: key) {
            let stored = try bytes.withUnsafeBytes { bytes in
                try key.withUnsafeBytes { try Store.recordValue(bytes, key: $0, entity: name) }
            }
            if evolutions[name] == nil { evolutions[name] = .some(try store.evolution(of: name, in: snapshot)) }
            found = evolutions[name]??.evolve(stored) ?? stored
        }
        records[name, default: [:]][key] = .some(found)
        return found
    }

    /// The model of `entity` with identifier key `key`, decoded as `T`; nil when there is none.
    func model<T: PersistentModel>(_ type: T.Type, key: [UInt8]) throws -> T? {
        if let known = models[T.entityName]?[key] { return known as? T }
        var found: T?
        if let entity = try entity(T.entityName), let bytes = try record(of: entity, key: key) {
            found = try bytes.withUnsafeBytes { bytes in
                try key.withUnsafeBytes { try T.decodeStored(from: bytes, key: $0) }
            }
        }
        models[T.entityName, default: [:]][key] = .some(found)
        return found
    }

    /// `reference` with its model read (nil when the referenced model does not exist).
    func resolve<T: PersistentModel>(_ reference: Reference<T>) throws -> Reference<T> {
        var resolved = reference
        resolved.model = try model(T.self, key: reference.id.storageKey)
        return resolved
    }

    /// The identifier keys of the records of `source` whose `field` references the record of
    /// `target` with key `key`, in identifier order.
    func referrerKeys(of target: String, key: [UInt8], source: String, field: String) throws -> [[UInt8]] {
        guard let sourceEntity = try entity(source), let references = sourceEntity.references else { return [] }
        let prefix = try ReferenceKey.prefix(target: target, key: key)
        var keys: [[UInt8]] = []
        try snapshot.transaction.forEachEntry(in: references, withPrefix: prefix) { rest, _ in
            if let referrer = ReferenceKey.referrer(UnsafeRawBufferPointer(rebasing: rest)),
                referrer.entity == source, referrer.field == field
            {
                keys.append(referrer.key)
            }
        }
        guard let commit else { return keys }
        // The index is the snapshot's: the records of `source` that commits after the current
        // one changed are taken as they were at it.
        let later = try commit.keysChangedLater(in: source)
        guard !later.isEmpty else { return keys }
        var corrected = keys.filter { !later.contains($0) }
        for candidate in later {
            guard let bytes = try record(of: sourceEntity, key: candidate) else { continue }
            let targets = try bytes.withUnsafeBytes { bytes in
                try Store.referencedTargets(in: bytes, of: sourceEntity) { name in try self.entity(name)?.identifierKind
                }
            }
            if targets.contains(where: { $0.entity == target && $0.key == key && $0.field == field }) {
                corrected.append(candidate)
            }
        }
        return corrected.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// The identifier keys `record` (of `entity`) references through `field`.
    func referencedKeys(in record: [UInt8], of entity: String, field: String) throws -> [[UInt8]] {
        guard let storage = try self.entity(entity) else { return [] }
        let targets = try record.withUnsafeBytes { bytes in
            try Store.referencedTargets(in: bytes, of: storage) { name in try self.entity(name)?.identifierKind }
        }
        return targets.filter { $0.field == field }.map(\.key)
    }

    /// The models of type `S` whose `field` references the record of `target` with key `key`.
    func referrers<S: PersistentModel>(
        of target: String, key: [UInt8], as type: S.Type, field: String
    ) throws
        -> Related<S>
    {
        let keys = try referrerKeys(of: target, key: key, source: S.entityName, field: field)
        return Related(try keys.compactMap { try model(S.self, key: $0) })
    }
}
