import Foundation

extension ModelContext {
    /// Saves `model` at once, in a commit of its own, and returns it as the store then holds it: with its
    /// own identifier, or with the identifier of the record it updated when a unique index of `T` found that
    /// record holding its values (see ``ModelIndex/unique(_:onConflict:)``).
    ///
    /// ``insert(_:)`` followed by ``save()`` writes the same, but a value type cannot be told afterwards
    /// which record it became; this returns it. GRDB's `upsertAndFetch` is the same idea.
    ///
    /// ```swift
    /// let stored = try context.upsertAndFetch(User(email: "ada@example.com", name: "Ada"))
    /// // stored.id is the identifier of the User that had the address before, if one did.
    /// ```
    ///
    /// This context's staged changes are not saved with it.
    ///
    /// - Throws: ``RillError`` with `.uniqueConflict` when a unique index says ``UniqueConflictPolicy/fail``
    ///   (or the model is stored and would take another record's values); `.readOnly` when the container does
    ///   not allow saving; the errors of a save.
    public func upsertAndFetch<T: PersistentModel>(_ model: T) throws -> T {
        guard container.allowsSave else {
            throw RillError(.readOnly, "the container's configuration does not allow saving")
        }
        guard let entity = try entity(for: T.self) else {
            throw RillError(.unknownEntity, "the store has no entity \(T.entityName)")
        }
        let key = model.id.storageKey
        guard key.count <= store.maxKeySize else {
            throw RillError(
                .invalidIdentifier,
                "an identifier of \(T.entityName) takes \(key.count - 1) bytes; identifiers are limited to "
                    + "\(store.maxKeySize - 1) bytes")
        }
        let record = try Self.encode(model)
        let entry = try store.commit(
            [PreparedChange(entity: entity, key: key, operation: .upsert(record))], author: author)
        return try storedModel(T.self, entity: entity, key: key, record: record, entry: entry)
    }

    /// The model that a commit of one insert of `record` under `key` left in the store: the one it wrote, or,
    /// when it wrote nothing, the stored one with that identifier, or else the one a unique index sent it to.
    func storedModel<T: PersistentModel>(
        _ type: T.Type, entity: EntityStorage, key: [UInt8], record: [UInt8], entry: LogEntry?
    ) throws -> T {
        if let change = entry?.changes.first, let written = change.record {
            return try LiveDecoding.decode(T.self, written, key: change.key)
        }
        if let bytes = try store.record(of: entity, key: key) {
            return try LiveDecoding.decode(T.self, bytes, key: key)
        }
        if let owner = try store.uniqueOwner(of: record, key: key, entity: entity),
            let bytes = try store.record(of: entity, key: owner)
        {
            return try LiveDecoding.decode(T.self, bytes, key: owner)
        }
        throw RillError(.storage, "the \(T.entityName) just saved is missing")
    }
}
