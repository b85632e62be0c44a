import Foundation

/// Reads the models related to others, in one snapshot of the store: the model a reference names,
/// and the models whose references name a given one (through the reference index).
///
/// Used to prefetch a fetch's relationships and to evaluate predicates that look through them. A
/// model it read once is kept for the rest of its use, so that a list whose models share related
/// models reads each of those once.
final class RelationshipLoader {
    let store: Store
    let snapshot: StoreSnapshot
    /// Decoded models, by entity and identifier key (nil: known to be missing).
    private var models: [String: [[UInt8]: Any?]] = [:]
    private var entities: [String: EntityStorage?] = [:]

    init(store: Store, snapshot: StoreSnapshot) {
        self.store = store
        self.snapshot = snapshot
    }

    private func entity(_ name: String) throws -> EntityStorage? {
        if let known = entities[name] { return known }
        let found = try store.entity(named: name)
        entities[name] = found
        return found
    }

    /// The model of `entity` with identifier key `key`, decoded as `T`; nil when there is none.
    func model<T: PersistentModel>(_ type: T.Type, key: [UInt8]) throws -> T? {
        if let known = models[T.entityName]?[key] { return known as? T }
        var found: T?
        if let entity = try entity(T.entityName), let bytes = try snapshot.record(of: entity, key: key) {
            do {
                found = try T.decodeStored(from: bytes)
            } catch {
                let id = key.withUnsafeBytes { AnyIdentifier(storageKey: $0) }.map { "\($0)" } ?? "?"
                throw RillError(
                    .decodingFailed,
                    "the stored \(T.entityName) \(id) does not decode as \(T.self): \(ModelContext.describe(error))",
                    underlyingError: error)
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
        guard let references = try entity(target)?.references ?? entity(source)?.references else { return [] }
        let prefix = try ReferenceKey.prefix(target: target, key: key)
        var keys: [[UInt8]] = []
        try snapshot.transaction.forEachEntry(in: references, withPrefix: prefix) { rest, _ in
            if let referrer = ReferenceKey.referrer(UnsafeRawBufferPointer(rebasing: rest)),
                referrer.entity == source, referrer.field == field
            {
                keys.append(referrer.key)
            }
        }
        return keys
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
