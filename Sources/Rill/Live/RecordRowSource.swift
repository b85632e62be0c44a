import Foundation

/// The rows of a text query (`Query`): schema-less records, compared as the query language
/// sorts them.
///
/// A record of an earlier version of the entity reads as the entity's current schema says
/// (`evolution`, taken when the query starts): a renamed field under its current name, an
/// added one with its default. A query that reads an evolved field is then not screened on the
/// stored fields: its predicate is evaluated on each evolved record.
///
/// A predicate that looks through relationships (`QueryRelationships`) is evaluated on each record
/// with its related records read by the loader of the commit being applied (`relationshipSlot`).
struct RecordRowSource: LiveRowSource {
    let query: Query
    let evolution: RecordEvolution?
    /// The entity's relationships, as the query was started with them.
    let entityRelationships: [RelationshipSchema]
    /// The predicate, when it can be decided on the stored record (it reads no evolved field and
    /// no related record).
    let filter: QueryNode?
    /// The relationships the predicate looks through; nil when it reads none.
    let relationships: QueryRelationships?
    let relatedDependencies: [RelatedDependency]
    let relationshipSlot: RelationshipSlot?
    /// The conditions of a predicate that reads related records that the stored record alone
    /// decides (none when they read an evolved field).
    let necessaryCondition: QueryNode?

    /// The rows of `query`, whose entity evolves as `evolution` says and has `relationships`
    /// (`EntityStorage.relationships`).
    init(_ query: Query, evolution: RecordEvolution? = nil, relationships: [RelationshipSchema] = []) {
        self.query = query
        self.evolution = evolution
        entityRelationships = relationships
        let reads = QueryRelationships(query.predicate, relationships: relationships)
        self.relationships = reads
        relatedDependencies = reads?.reads.map { RelatedDependency($0.relationship) } ?? []
        relationshipSlot = reads == nil ? nil : RelationshipSlot()
        if let evolution, let predicate = query.predicate, evolution.touches(predicate.topLevelFields) {
            filter = nil
        } else {
            filter = reads == nil ? query.predicate : nil
        }
        let own = reads?.ownCondition
        necessaryCondition = own.flatMap { own in evolution?.touches(own.topLevelFields) == true ? nil : own }
    }

    /// `query` on `store`, with the evolution its entity's current schema describes as `snapshot` sees it.
    init(_ query: Query, store: Store, in snapshot: StoreSnapshot) throws {
        self.init(
            query, evolution: try store.evolution(of: query.entity, in: snapshot),
            relationships: try store.entity(named: query.entity)?.relationships ?? [])
    }

    /// `query` on `store`, with the evolution its entity's current schema describes now.
    init(_ query: Query, store: Store) throws {
        self.init(
            query, evolution: try store.evolution(of: query.entity),
            relationships: try store.entity(named: query.entity)?.relationships ?? [])
    }

    /// Whether `other` makes the same rows of the same records as this source: the same query,
    /// evolution and relationships (what a shared query needs of its sharers).
    func reads(as other: RecordRowSource) -> Bool {
        query == other.query && evolution == other.evolution && entityRelationships == other.entityRelationships
    }

    var entityName: String { query.entity }
    var offset: Int? { query.offset }
    var limit: Int? { query.limit }

    var dependencies: Set<String>? {
        guard let evolution else { return usedFields }
        return evolution.dependencies(usedFields)
    }

    /// The top-level fields the predicate and sort read; nil when not known.
    private var usedFields: Set<String>? {
        var fields: Set<String> = []
        if let predicate = query.predicate {
            guard let used = predicate.topLevelFields else { return nil }
            fields = used
        }
        for key in query.sort {
            guard let first = key.path.first else { return nil }
            fields.insert(first)
        }
        return fields
    }

    /// Rows are compared by value: the query language's order of mixed values and strings is
    /// not the index keys' order in every case.
    var orderPaths: [QuerySortKey]? { nil }

    func row(
        for change: DecodedChange, filtered: Bool, order: (RecordValue) throws -> [UInt8]?
    ) throws -> LiveEntry? {
        guard let stored = try change.recordValue() else { return nil }
        let record = evolution?.evolve(stored) ?? stored
        if !filtered, try !matches(record, key: change.key) { return nil }
        return LiveRecordRow(key: change.key, record: record)
    }

    func row(record: [UInt8], key: [UInt8], order: (RecordValue) throws -> [UInt8]?) throws -> LiveEntry? {
        let stored = try Self.recordValue(record, key: key, entity: query.entity)
        let value = evolution?.evolve(stored) ?? stored
        if try !matches(value, key: key) { return nil }
        return LiveRecordRow(key: key, record: value)
    }

    /// Whether `record` matches the predicate, its related records read by the slot's loader.
    private func matches(_ record: RecordValue, key: [UInt8]) throws -> Bool {
        guard let predicate = query.predicate else { return true }
        guard let relationships else { return QueryEvaluator.matches(predicate, record) }
        guard let loader = relationshipSlot?.loader else {
            throw RillError(.misuse, "the related records of a live query were read outside a commit")
        }
        return try relationships.matches(record, key: key, entity: query.entity, loader: loader)
    }

    func fetch(
        limit: Int?, in transaction: StoreSnapshot, store: Store, order: (RecordValue, [UInt8]) throws -> [UInt8]?
    ) throws -> [LiveEntry] {
        // A live query may start before its entity's first record exists.
        guard let entity = try store.entity(named: query.entity) else { return [] }
        var query = self.query
        query.offset = nil
        query.limit = limit
        let rows =
            try relationships.map {
                try store.run(
                    query, through: $0, entity: entity, forceScan: false, in: transaction,
                    loader: relationshipSlot?.loader)
            } ?? store.run(query, in: transaction)
        return rows.map { LiveRecordRow(key: $0.key, record: $0.record) }
    }

    func compare(_ lhs: LiveEntry, _ rhs: LiveEntry) -> ComparisonResult {
        Self.compare(lhs, rhs, sort: query.sort)
    }

    /// `compare`, holding the sort alone.
    var comparator: (LiveEntry, LiveEntry) -> ComparisonResult {
        let sort = query.sort
        return { lhs, rhs in Self.compare(lhs, rhs, sort: sort) }
    }

    /// For a sort by one key: the probe's value read once.
    func probeComparator(_ probe: LiveEntry) -> ((LiveEntry) -> ComparisonResult)? {
        guard query.sort.count == 1 else { return nil }
        let key = query.sort[0]
        let probeValue = QueryEvaluator.read(key.path, from: unsafeDowncast(probe, to: LiveRecordRow.self).record)
        return { row in
            Self.order(
                QueryEvaluator.read(key.path, from: unsafeDowncast(row, to: LiveRecordRow.self).record), probeValue,
                by: key)
        }
    }

    /// The order of two values of the sort key `key`, its direction applied.
    private static func order(_ left: RecordValue, _ right: RecordValue, by key: QuerySortKey) -> ComparisonResult {
        let order = QueryValueOrder.sortOrder(left, right)
        if order == .orderedSame || key.ascending { return order }
        return order == .orderedAscending ? .orderedDescending : .orderedAscending
    }

    private static func compare(_ lhs: LiveEntry, _ rhs: LiveEntry, sort: [QuerySortKey]) -> ComparisonResult {
        let left = unsafeDowncast(lhs, to: LiveRecordRow.self).record
        let right = unsafeDowncast(rhs, to: LiveRecordRow.self).record
        for key in sort {
            let order = Self.order(
                QueryEvaluator.read(key.path, from: left), QueryEvaluator.read(key.path, from: right), by: key)
            if order != .orderedSame { return order }
        }
        return .orderedSame
    }

    static func element(_ row: LiveEntry) -> QueryRow {
        let row = unsafeDowncast(row, to: LiveRecordRow.self)
        return QueryRow(key: row.key, record: row.record)
    }
}
