import Foundation

extension ModelContext {
    // MARK: - Fetching a family

    /// The models of every kind of the family of `Base` described by `descriptor` (a deep
    /// fetch), each as the kind its record names, including this context's unsaved changes.
    ///
    /// For example:
    ///
    /// ```swift
    /// let baked = try context.fetch(FamilyDescriptor<any Recipe>(predicate: #Predicate { $0 is BakedGood }))
    /// ```
    ///
    /// - Throws: ``RillError`` with `.unknownEntity` when no model type of the container is a kind
    ///   of a family of `Base`, `.decodingFailed` when a stored record names no kind of the family
    ///   or does not decode as the kind it names, and `.queryFailed` when the predicate throws.
    public func fetch<Base>(_ descriptor: FamilyDescriptor<Base>) throws -> [Base] {
        try executor(for: descriptor).models()
    }

    /// The number of models `fetch(descriptor)` would return.
    public func fetchCount<Base>(_ descriptor: FamilyDescriptor<Base>) throws -> Int {
        try executor(for: descriptor).count()
    }

    /// How `fetch(descriptor)` would run, for a person.
    public func explain<Base>(_ descriptor: FamilyDescriptor<Base>) throws -> String {
        try executor(for: descriptor).explanation()
    }

    private func executor<Base>(for descriptor: FamilyDescriptor<Base>) throws -> FamilyExecutor<Base> {
        let family = try container.family(of: Base.self)
        return FamilyExecutor(
            store: store, entity: container.entitiesByName[family.entityName], family: family, descriptor: descriptor,
            staged: descriptor.includePendingChanges
                ? stagedChanges(ofEntity: family.entityName, as: Base.self) : StorageHeader.emptyDictionary())
    }
}

extension ModelContainer {
    /// The family whose base is `base`.
    ///
    /// - Throws: `RillError(.unknownEntity)` when none of the container's model types is a kind of one.
    func family<Base>(of base: Base.Type) throws -> ModelFamily {
        guard let family = familiesByBase[ObjectIdentifier(base)] else {
            throw RillError(
                .unknownEntity,
                "no model type of this container is a kind of a family of \(Base.self); pass its kinds to "
                    + "ModelContainer(for:)")
        }
        return family
    }
}
