import Foundation

extension ModelContext {
    // MARK: - Fetching

    /// The models described by `descriptor`, including this context's unsaved changes unless
    /// the descriptor's ``FetchDescriptor/includePendingChanges`` is false.
    ///
    /// - Throws: ``RillError`` with `.unknownEntity` when `T` is not one of the container's
    ///   model types, `.decodingFailed` when a stored record does not decode as `T`, and
    ///   `.queryFailed` when the predicate throws.
    @inlinable
    public func fetch<T: PersistentModel>(_ descriptor: consuming FetchDescriptor<T>) throws -> [T] {
        try executor(for: descriptor).models()
    }

    /// The number of models `fetch(descriptor)` would return.
    public func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        try executor(for: descriptor).count()
    }

    /// The identifiers of the models `fetch(descriptor)` would return, in the same order.
    public func fetchIdentifiers<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [T.ID] {
        try fetch(descriptor).map { $0.id }
    }

    /// How `fetch(descriptor)` would run, for a person: the index and key ranges or the scan it
    /// reads, what of the predicate was translated for the index, what is evaluated in Swift on
    /// each candidate, and how the results are ordered and cut.
    ///
    /// For example:
    ///
    /// ```swift
    /// print(try context.explain(FetchDescriptor<Book>(predicate: #Predicate { $0.pages > 300 })))
    /// // index Book(pages): 1 key range for pages > 300 (of 10000 records)
    /// // translated: pages > 300
    /// // residual: the whole predicate, evaluated in Swift on each candidate
    /// ```
    public func explain<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> String {
        try executor(for: descriptor).explanation()
    }

    /// The model of type `type` with identifier `id`, as this context sees it, or nil.
    ///
    /// For example: `let book = try context.model(Book.self, id: bookID)`.
    public func model<T: PersistentModel>(_ type: T.Type, id: T.ID) throws -> T? {
        let key = id.storageKey
        if let staged = stagedChange(of: T.self, key: key) { return staged }
        guard let entity = try entity(for: T.self),
            let bytes = try store.record(of: entity, key: key)
        else { return nil }
        // The identifier may be of another kind of the family: that record is not a `T`.
        if let kindTest = T.kindTest, let family = T.family {
            let record = try bytes.withUnsafeBytes { bytes in
                try key.withUnsafeBytes {
                    try Store.recordValue(bytes, key: $0, entity: T.entityName, fields: [family.discriminator])
                }
            }
            guard QueryEvaluator.matches(kindTest, record) else { return nil }
        }
        do {
            return try T.decodeStored(from: bytes)
        } catch {
            throw RillError(
                .decodingFailed,
                "the stored \(T.entityName) \(id) does not decode as \(T.self): \(Self.describe(error))",
                underlyingError: error)
        }
    }

    /// Inlinable, as `fetch` and the executor's initializers are: compiled in the caller's module
    /// for its model type (see `QueryExecutor`).
    @inlinable
    func executor<T: PersistentModel>(for descriptor: consuming FetchDescriptor<T>) throws -> QueryExecutor<T> {
        let name = T.entityName
        let staged: [[UInt8]: T?] =
            descriptor.includePendingChanges
            ? stagedChanges(ofEntity: name, as: T.self) : StorageHeader.emptyDictionary()
        return QueryExecutor(
            store: store, entity: try entity(for: T.self, named: name), descriptor: descriptor, staged: staged)
    }
}
