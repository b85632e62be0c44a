import Foundation

/// The rows of a `FetchDescriptor<T>`: decoded models.
struct ModelRowSource<T: PersistentModel>: LiveRowSource {
    let descriptor: FetchDescriptor<T>
    /// How the predicate is decided: by `filter` when it is translated completely.
    let predicate: ModelPredicate<T>
    let filter: QueryNode?
    let dependencies: Set<String>?
    let orderPaths: [QuerySortKey]?
    /// The relationships the predicate looks through, read on a copy of each model it tests.
    let predicateRelationships: [ModelRelationship<T>]
    let relatedDependencies: [RelatedDependency]
    let relationshipSlot: RelationshipSlot?
    /// What this source's rows are made of, for sharing them with other queries' (`SharedRows`);
    /// nil when they are not shared: models of a class (an object given to the observers of
    /// one query only), or with relationships prefetched (the rows depend on other records).
    let sharedVariant: SharedRows.Variant?

    var necessaryCondition: QueryNode? { filter == nil ? predicate.translation?.node : nil }

    init(_ descriptor: FetchDescriptor<T>) {
        self.descriptor = descriptor
        let predicate = ModelPredicate(of: descriptor)
        let filter = predicate.exact
        var fields: Set<String>? = []
        if let filter {
            if let used = filter.topLevelFields { fields?.formUnion(used) } else { fields = nil }
        } else if descriptor.predicate != nil {
            fields = nil
        }
        for sort in descriptor.sortBy {
            guard let keyPath = sort.keyPath, let path = FieldPath.components(of: keyPath, root: T.self),
                let first = path.first
            else {
                fields = nil
                break
            }
            fields?.insert(first)
        }
        self.predicate = predicate
        self.filter = filter
        self.dependencies = fields
        self.orderPaths = QueryExecutor<T>.orderPreservingSortKeys(descriptor.sortBy)
        let related = predicate.relationshipFields
        predicateRelationships =
            related.isEmpty ? [] : T.relationships.filter { related.contains($0.schema.field) }
        relatedDependencies = predicateRelationships.map { RelatedDependency($0.schema) }
        relationshipSlot = predicateRelationships.isEmpty ? nil : RelationshipSlot()
        sharedVariant =
            T.self is AnyObject.Type || !descriptor.relationshipKeyPathsForPrefetching.isEmpty
            ? nil : SharedRows.variant(entity: T.entityName, model: T.self, orderPaths: orderPaths)
    }

    /// The predicate on `model`, with the relationships it looks through read as of the commit
    /// being applied.
    private func evaluate(_ model: T) throws -> Bool {
        guard let loader = relationshipSlot?.loader else { return try predicate.evaluate(model) }
        var resolved = model
        for relationship in predicateRelationships { try relationship.resolve(&resolved, loader) }
        return try predicate.evaluate(resolved)
    }

    /// What makes two sources' rows the same, when it can be decided: a live query of this
    /// source may then share the maintained result of any other with an equal key. Nil when the
    /// predicate has no complete translation (two `#Predicate`s can only be compared by their
    /// translations; one that is incomplete leaves a part decided by a closure) or reads
    /// relationships.
    ///
    /// With a complete translation the predicate is decided by the translation alone, on the
    /// stored record; the rows are then made alike from the same records — decoded as `T`, in
    /// the order of equal sort descriptors, cut by the same window, with the same relationships
    /// prefetched.
    var sharingKey: AnyHashable? {
        guard descriptor.predicate == nil || filter != nil, relationshipSlot == nil else { return nil }
        return AnyHashable(
            SharingKey(
                filter: filter, sort: descriptor.sortBy, offset: descriptor.fetchOffset, limit: descriptor.fetchLimit,
                prefetched: descriptor.relationshipKeyPathsForPrefetching.map { AnyHashable($0 as PartialKeyPath<T>) }))
    }

    /// The parts of a descriptor that make its rows (for `sharingKey`); of one model type.
    private struct SharingKey: Hashable {
        var filter: QueryNode?
        var sort: [SortDescriptor<T>]
        var offset: Int?
        var limit: Int?
        var prefetched: [AnyHashable]
    }

    var entityName: String { T.entityName }
    var offset: Int? { descriptor.fetchOffset }
    var limit: Int? { descriptor.fetchLimit }

    func row(
        for change: DecodedChange, filtered: Bool, order: (RecordValue) throws -> [UInt8]?
    ) throws -> LiveEntry? {
        // A record of another kind of the family is not decoded: it may not decode as this one.
        if let recordTest = predicate.recordTest {
            guard let record = try change.recordValue(), QueryEvaluator.matches(recordTest, record) else { return nil }
        }
        guard let model = try change.model(T.self) else { return nil }
        // The filter is the predicate's complete translation: it decides alone.
        if !filtered {
            if let filter {
                guard let record = try change.recordValue(), QueryEvaluator.matches(filter, record) else { return nil }
            } else if try !evaluate(model) {
                return nil
            }
        }
        func make(_ key: [UInt8]) throws -> LiveEntry {
            LiveRow(key: key, model: model, order: try change.recordValue().flatMap(order))
        }
        if let variant = sharedVariant, let table = change.sharedRows, let record = change.change.record {
            // The row other queries take of the record's new bytes (see `SharedRows`).
            return try change.key.withUnsafeBytes { key in
                try record.withUnsafeBytes { bytes in
                    try table.row(key: key, bytes: bytes, variant: variant) { key, _ in try make(key) }
                }
            }
        }
        return try make(change.key)
    }

    func row(record: [UInt8], key: [UInt8], order: (RecordValue) throws -> [UInt8]?) throws -> LiveEntry? {
        var value: RecordValue?
        if let filter {
            let parsed = try Self.recordValue(record, key: key, entity: T.entityName)
            guard QueryEvaluator.matches(filter, parsed) else { return nil }
            value = parsed
        } else if let recordTest = predicate.recordTest {
            let parsed = try Self.recordValue(record, key: key, entity: T.entityName)
            guard QueryEvaluator.matches(recordTest, parsed) else { return nil }
            value = parsed
        }
        let model = try LiveDecoding.decode(T.self, record, key: key)
        if filter == nil, try !evaluate(model) { return nil }
        let orderKey =
            orderPaths == nil ? nil : try order(value ?? Self.recordValue(record, key: key, entity: T.entityName))
        return LiveRow(key: key, model: model, order: orderKey)
    }

    func fetch(
        limit: Int?, in transaction: StoreSnapshot, store: Store, order: (RecordValue, [UInt8]) throws -> [UInt8]?
    ) throws -> [LiveEntry] {
        guard let entity = try store.entity(named: T.entityName) else { return [] }
        var descriptor = self.descriptor
        descriptor.fetchOffset = nil
        descriptor.fetchLimit = limit
        // A record another query's load read at this snapshot is not read again.
        var snapshot = transaction
        let readAt = transaction.snapshotID
        if let variant = sharedVariant {
            snapshot.knownRecords = store.sharedRows.known(
                entity: variant.entity, records: entity.recordsHandle, at: readAt)
        }
        let executor = QueryExecutor(
            store: store, entity: entity, descriptor: descriptor, staged: Dictionary(), transaction: snapshot,
            predicate: predicate)
        guard let orderPaths else {
            // Rows compare by model: the executor orders them.
            return try executor.models().map { LiveRow(key: $0.id.storageKey, model: $0, order: nil) }
        }
        let window = QueryWindow(offset: nil, limit: limit)
        if window.isEmpty { return [] }
        // Each record is read once: its model and, from the same bytes, the fields it is
        // ordered by.
        let fields = Set(orderPaths.compactMap { $0.path.first })
        var rows: [LiveEntry] = []
        let shared = sharedVariant.map { (rows: store.sharedRows, variant: $0) }
        let entityName = T.entityName
        let sorted = try executor.forEachStoredMatch(limit: limit) { key, bytes, model in
            // A row of the same bytes ordered another way has the model already: it is not
            // decoded again.
            func make(_ keyArray: [UInt8], sameModel: LiveEntry?) throws -> LiveEntry {
                let record = try Store.recordValue(bytes, key: key, entity: entityName, fields: fields)
                // Not `Optional.map`: unspecialized here, it costs more than the copy.
                let decoded: T
                if let sameModel { decoded = LiveRow<T>.model(sameModel) } else { decoded = try model() }
                return LiveRow(key: keyArray, model: decoded, order: try order(record, keyArray))
            }
            if let shared {
                // A row another query made of the same bytes is this one's too.
                rows.append(
                    try shared.rows.row(
                        key: key, bytes: bytes, variant: shared.variant, snapshot: readAt, make: make))
            } else {
                rows.append(try make(Array(key), sameModel: nil))
            }
        }
        // The order keys are the descriptor's order. A walk in index order gave the first
        // `limit` rows already in it (sorting them again costs a pass); any other walk gave
        // every match, in no order.
        LiveEntry.sortByOrder(&rows)
        if !sorted { rows.removeSubrange(window.range(in: rows.count).upperBound...) }
        return rows
    }

    func compare(_ lhs: LiveEntry, _ rhs: LiveEntry) -> ComparisonResult {
        let (leftModel, rightModel) = (LiveRow<T>.model(lhs), LiveRow<T>.model(rhs))
        for sort in descriptor.sortBy {
            let order = sort.totalCompare(leftModel, rightModel)
            if order != .orderedSame { return order }
        }
        return .orderedSame
    }

    static func element(_ row: LiveEntry) -> T { LiveRow<T>.model(row) }
}
