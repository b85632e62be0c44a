import Foundation

extension ModelContext {
    /// The stored model of `type` with identifier `id`, or else the model `makeDefault` returns,
    /// inserted and saved at once — exactly one, however many processes ask at the same moment.
    ///
    /// The way to make sure a single record exists from the first launch on, such as an app's
    /// settings: give it a fixed identifier, and ask for it at startup.
    ///
    /// ```swift
    /// let settings = try context.fetchOrInsert(Settings.self, id: "main") {
    ///     Settings(id: "main", theme: .system, fontSize: 14)
    /// }
    /// ```
    ///
    /// When the store has no such model, the default is saved in a commit of its own, as an insert
    /// that the store makes only if no model has that identifier by the time the commit is
    /// written (inside the save's transaction, which LMDB serializes across processes). Of two
    /// processes starting together, one inserts its default and the other's commit writes
    /// nothing; both return the model that was stored. When a unique index of `T` finds the
    /// default's values in another model, the insert updates that one, which is returned (see
    /// ``ModelIndex/unique(_:onConflict:)``). This context's staged changes are not saved
    /// with it, and a staged version of the model is returned as it is, as ``model(_:id:)`` does.
    ///
    /// - Throws: ``RillError`` with `.misuse` when the default's `id` is not `id`; `.readOnly`
    ///   when the container does not allow saving; the errors of a save.
    public func fetchOrInsert<T: PersistentModel>(
        _ type: T.Type, id: T.ID, default makeDefault: () throws -> T
    ) throws -> T {
        if let existing = try model(T.self, id: id) { return existing }
        let made = try makeDefault()
        guard made.id == id else {
            throw RillError(
                .misuse, "the default \(T.entityName) has id \(made.id), not \(id): give it the identifier asked for")
        }
        guard container.allowsSave else {
            throw RillError(.readOnly, "the container's configuration does not allow saving")
        }
        guard let entity = try entity(for: T.self) else {
            throw RillError(.unknownEntity, "the store has no entity \(T.entityName)")
        }
        let record = try Self.encode(made)
        let change = PreparedChange(entity: entity, key: id.storageKey, operation: .insertIfAbsent(record))
        let entry = try store.commit([change], author: author)
        // A unique index of `T` may have sent the default to the record holding its values.
        return try storedModel(T.self, entity: entity, key: id.storageKey, record: record, entry: entry)
    }
}
