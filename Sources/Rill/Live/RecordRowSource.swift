import Foundation

/// The rows of a text query (`Query`): schema-less records, compared as the query language
/// sorts them.
struct RecordRowSource: LiveRowSource {
    let query: Query

    init(_ query: Query) { self.query = query }

    var entityName: String { query.entity }
    var offset: Int? { query.offset }
    var limit: Int? { query.limit }
    var filter: QueryNode? { query.predicate }

    var dependencies: Set<String>? {
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
        guard let record = try change.recordValue() else { return nil }
        if !filtered, let predicate = query.predicate, !QueryEvaluator.matches(predicate, record) { return nil }
        return LiveRecordRow(key: change.key, record: record)
    }

    func row(record: [UInt8], key: [UInt8], order: (RecordValue) throws -> [UInt8]?) throws -> LiveEntry? {
        let value = try Self.recordValue(record, key: key, entity: query.entity)
        if let predicate = query.predicate, !QueryEvaluator.matches(predicate, value) { return nil }
        return LiveRecordRow(key: key, record: value)
    }

    func fetch(
        limit: Int?, in transaction: StoreSnapshot, store: Store, order: (RecordValue, [UInt8]) throws -> [UInt8]?
    ) throws -> [LiveEntry] {
        // A live query may start before its entity's first record exists.
        guard try store.entity(named: query.entity) != nil else { return [] }
        var query = self.query
        query.offset = nil
        query.limit = limit
        return try store.run(query, in: transaction).map { LiveRecordRow(key: $0.key, record: $0.record) }
    }

    func compare(_ lhs: LiveEntry, _ rhs: LiveEntry) -> ComparisonResult {
        let left = unsafeDowncast(lhs, to: LiveRecordRow.self).record
        let right = unsafeDowncast(rhs, to: LiveRecordRow.self).record
        for key in query.sort {
            let order = QueryValueOrder.sortOrder(
                QueryEvaluator.read(key.path, from: left), QueryEvaluator.read(key.path, from: right))
            if order == .orderedSame { continue }
            return key.ascending ? order : (order == .orderedAscending ? .orderedDescending : .orderedAscending)
        }
        return .orderedSame
    }

    static func element(_ row: LiveEntry) -> QueryRow {
        let row = unsafeDowncast(row, to: LiveRecordRow.self)
        return QueryRow(key: row.key, record: row.record)
    }
}
