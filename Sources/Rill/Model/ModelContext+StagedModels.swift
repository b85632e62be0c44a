import Foundation

extension ModelContext {
    // MARK: - Unsaved changes

    /// The models staged by ``insert(_:)`` whose identifiers the store does not hold: what the
    /// next save would add.
    ///
    /// In the order they were first staged. A model inserted and then deleted before a save is
    /// in none of the three lists; one inserted with the identifier of a stored model is in
    /// ``changedModelsArray``.
    ///
    /// As in SwiftData, so that code written for it reads a context's unsaved work:
    ///
    /// ```swift
    /// context.insert(Book(title: "Dune", author: "Frank Herbert"))
    /// print(context.insertedModelsArray.count)  // 1
    /// try context.save()
    /// print(context.insertedModelsArray.count)  // 0
    /// ```
    ///
    /// Each call reads the store once, in one snapshot. Models of another process's or context's
    /// saves since they were staged are classified by the store as it is now. When the store
    /// cannot be read, every staged model counts as inserted and no deletion is listed.
    public var insertedModelsArray: [any PersistentModel] { unsavedModels().inserted }

    /// The models staged by ``insert(_:)`` that replace a stored model with other values: what the
    /// next save would update. A model staged equal to the stored one is not listed (a save does
    /// not record it).
    ///
    /// In the order they were first staged; see ``insertedModelsArray``.
    public var changedModelsArray: [any PersistentModel] { unsavedModels().changed }

    /// The stored models staged for deletion, as they are stored: what the next save would
    /// delete. A deletion of an identifier the store does not hold is not listed.
    ///
    /// In the order they were first staged; see ``insertedModelsArray``.
    public var deletedModelsArray: [any PersistentModel] { unsavedModels().deleted }

    /// The staged changes, classified against the store as one snapshot holds it.
    private func unsavedModels() -> (
        inserted: [any PersistentModel], changed: [any PersistentModel], deleted: [any PersistentModel]
    ) {
        var staged = stagedSnapshot()
        staged.index()
        let entries = staged.entries
        guard !entries.isEmpty else { return ([], [], []) }
        do {
            return try store.read { snapshot in
                var inserted: [any PersistentModel] = []
                var changed: [any PersistentModel] = []
                var deleted: [any PersistentModel] = []
                for entry in entries {
                    let stored = try container.entitiesByName[entry.key.entity].flatMap { entity in
                        try snapshot.record(of: entity, key: entry.key.id).map(Array.init)
                    }
                    switch entry.change {
                    case .upsert(let model):
                        guard let stored else {
                            inserted.append(model)
                            continue
                        }
                        if !Self.encodes(model, as: stored) { changed.append(model) }
                    case .delete:
                        if let stored, let model = try storedModel(entity: entry.key.entity, stored, key: entry.key.id)
                        {
                            deleted.append(model)
                        }
                    }
                }
                return (inserted, changed, deleted)
            }
        } catch {
            return (
                entries.compactMap { entry in
                    if case .upsert(let model) = entry.change { return model }
                    return nil
                }, [], []
            )
        }
    }

    /// Whether `model` encodes to exactly `stored`, the bytes a save would leave as they are.
    private static func encodes<M: PersistentModel>(_ model: M, as stored: [UInt8]) -> Bool {
        (try? M.encodeStored(model)) == stored
    }

    /// The stored record `bytes` of `entity` as a model: of the type registered for the entity,
    /// or of the kind of its family the record is of.
    private func storedModel(entity: String, _ bytes: [UInt8], key: [UInt8]) throws -> (any PersistentModel)? {
        func decoded<M: PersistentModel>(_ type: M.Type) throws -> M? {
            var decoder: RecordDecoder?
            return try bytes.withUnsafeBytes { bytes in
                try key.withUnsafeBytes { key in try Self.storedModel(M.self, bytes, key: key, reusing: &decoder) }
            }
        }
        guard let type = container.modelTypes.first(where: { $0.entityName == entity }) else { return nil }
        // A family's record is of one of its kinds, whichever of them the container was given.
        for kind in type.family?.kinds.map(\.type) ?? [type] {
            if let model = try decoded(kind) { return model }
        }
        return nil
    }
}
