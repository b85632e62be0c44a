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
    ///
    /// Where an index or the identifier order gives the matches in the descriptor's order, only
    /// their identifiers are kept (models are decoded only to evaluate a predicate that needs
    /// them).
    public func fetchIdentifiers<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [T.ID] {
        try executor(for: descriptor).identifierKeys().map { try Self.identifier(T.self, key: $0) }
    }

    /// The identifier of the `T` whose storage key is `key`.
    static func identifier<T: PersistentModel>(_ type: T.Type, key: [UInt8]) throws -> T.ID {
        guard let id = key.withUnsafeBytes({ T.ID.fromStorageKey($0) }) else {
            throw RillError(
                .decodingFailed, "a stored \(T.entityName) identifier key is not a \(T.ID.self): \(key.count) bytes")
        }
        return id
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
        var decoder = SpareDecoder.take()
        defer { SpareDecoder.putBack(decoder) }
        return try bytes.withUnsafeBytes { bytes in
            try key.withUnsafeBytes { try Self.storedModel(T.self, bytes, key: $0, reusing: &decoder) }
        }
    }

    /// The stored record `bytes` of identifier key `key` as a `T`; nil when it is a model of
    /// another kind of `T`'s family.
    static func storedModel<T: PersistentModel>(
        _ type: T.Type, _ bytes: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer,
        reusing decoder: inout RecordDecoder?
    ) throws -> T? {
        if let kindTest = T.kindTest, let family = T.family {
            let record = try Store.recordValue(bytes, key: key, entity: T.entityName, fields: [family.discriminator])
            guard QueryEvaluator.matches(kindTest, record) else { return nil }
        }
        return try T.decodeStored(from: bytes, key: key, reusing: &decoder)
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
