import Foundation
import RillStorage

/// What a maintained query's rows are made of and how they are chosen and ordered: typed models
/// of a `FetchDescriptor` (``ModelRowSource``), or schema-less records of a text query
/// (``RecordRowSource``). `MaintainedQuery` does the rest — positions, windows, refills, changes —
/// the same way for both.
protocol LiveRowSource {
    associatedtype Element: Sendable

    var entityName: String { get }
    /// The window: how many matches to skip, and how many to keep after them (nil: all).
    var offset: Int? { get }
    var limit: Int? { get }
    /// The predicate's complete translation, when there is one: it decides alone whether a
    /// record matches, on the schema-less record. Nil with no predicate too.
    var filter: QueryNode? { get }
    /// The top-level fields the predicate and sort read; nil when not known (every field).
    var dependencies: Set<String>? { get }
    /// The sort as field paths whose index-key order is the sort's: rows then carry order keys
    /// and compare with `memcmp`. Nil when rows must be compared with ``precedes(_:_:)``.
    var orderPaths: [QuerySortKey]? { get }

    /// The row of a changed record when it matches, else nil. `filtered` tells that the record
    /// passed ``filter`` already.
    func row(
        for change: DecodedChange, filtered: Bool, order: (RecordValue) throws -> [UInt8]?
    ) throws -> LiveEntry?

    /// The row of a stored record when it matches, else nil.
    func row(
        record: [UInt8], key: [UInt8], order: (RecordValue) throws -> [UInt8]?
    ) throws -> LiveEntry?

    /// The first `limit` matches (all with nil), in order, as of the transaction's snapshot.
    func fetch(
        limit: Int?, in transaction: ReadTransaction, store: Store, order: (RecordValue, [UInt8]) throws -> [UInt8]?
    ) throws -> [LiveEntry]

    /// The sort's order of two rows without order keys (`.orderedSame` for ties: the identifier
    /// decides).
    func compare(_ lhs: LiveEntry, _ rhs: LiveEntry) -> ComparisonResult

    /// The element a row of this source shows.
    static func element(_ row: LiveEntry) -> Element
}

extension LiveRowSource {
    /// The schema-less record in `bytes`.
    static func recordValue(_ bytes: [UInt8], key: [UInt8], entity: String) throws -> RecordValue {
        try bytes.withUnsafeBytes { bytes in
            try key.withUnsafeBytes { try Store.recordValue(bytes, key: $0, entity: entity) }
        }
    }
}

// MARK: - Typed models

/// The rows of a `FetchDescriptor<T>`: decoded models.
struct ModelRowSource<T: PersistentModel>: LiveRowSource {
    let descriptor: FetchDescriptor<T>
    /// How the predicate is decided: by `filter` when it is translated completely.
    let predicate: ModelPredicate<T>
    let filter: QueryNode?
    let dependencies: Set<String>?
    let orderPaths: [QuerySortKey]?

    init(_ descriptor: FetchDescriptor<T>) {
        self.descriptor = descriptor
        let predicate = ModelPredicate(descriptor.predicate)
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
    }

    var entityName: String { T.entityName }
    var offset: Int? { descriptor.fetchOffset }
    var limit: Int? { descriptor.fetchLimit }

    func row(
        for change: DecodedChange, filtered: Bool, order: (RecordValue) throws -> [UInt8]?
    ) throws -> LiveEntry? {
        guard let model = try change.model(T.self) else { return nil }
        // The filter is the predicate's complete translation: it decides alone.
        if !filtered {
            if let filter {
                guard let record = try change.recordValue(), QueryEvaluator.matches(filter, record) else { return nil }
            } else if try !predicate.evaluate(model) {
                return nil
            }
        }
        let key = change.key
        return LiveRow(key: key, model: model, order: try change.recordValue().flatMap(order))
    }

    func row(record: [UInt8], key: [UInt8], order: (RecordValue) throws -> [UInt8]?) throws -> LiveEntry? {
        var value: RecordValue?
        if let filter {
            let parsed = try Self.recordValue(record, key: key, entity: T.entityName)
            guard QueryEvaluator.matches(filter, parsed) else { return nil }
            value = parsed
        }
        let model = try LiveDecoding.decode(T.self, record, key: key)
        if filter == nil, try !predicate.evaluate(model) { return nil }
        let orderKey =
            orderPaths == nil ? nil : try order(value ?? Self.recordValue(record, key: key, entity: T.entityName))
        return LiveRow(key: key, model: model, order: orderKey)
    }

    func fetch(
        limit: Int?, in transaction: ReadTransaction, store: Store, order: (RecordValue, [UInt8]) throws -> [UInt8]?
    ) throws -> [LiveEntry] {
        guard let entity = try store.entity(named: T.entityName) else { return [] }
        var descriptor = self.descriptor
        descriptor.fetchOffset = nil
        descriptor.fetchLimit = limit
        let executor = QueryExecutor(
            store: store, entity: entity, descriptor: descriptor, staged: [:], transaction: transaction,
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
        let sorted = try executor.forEachStoredMatch(limit: limit) { key, bytes, model in
            let record = try Store.recordValue(bytes, key: key, entity: T.entityName, fields: fields)
            let key = Array(key)
            rows.append(LiveRow(key: key, model: model, order: try order(record, key)))
        }
        // The order keys are the descriptor's order. A walk in index order gave the first
        // `limit` rows already in it (sorting them again costs a pass); any other walk gave
        // every match, in no order.
        rows.sort { OrderKey.precedes($0.order!, $1.order!) }
        if !sorted { rows.removeSubrange(window.range(in: rows.count).upperBound...) }
        return rows
    }

    func compare(_ lhs: LiveEntry, _ rhs: LiveEntry) -> ComparisonResult {
        let (leftModel, rightModel) = (LiveRow<T>.model(lhs), LiveRow<T>.model(rhs))
        for sort in descriptor.sortBy {
            let order = sort.compare(leftModel, rightModel)
            if order != .orderedSame { return order }
        }
        return .orderedSame
    }

    static func element(_ row: LiveEntry) -> T { LiveRow<T>.model(row) }
}

// MARK: - Schema-less records

/// A row of a text query: the record without a model type.
final class LiveRecordRow: LiveEntry, @unchecked Sendable {
    // Sendable: immutable.
    let record: RecordValue

    init(key: [UInt8], record: RecordValue) {
        self.record = record
        super.init(key: key, order: nil)
    }
}

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
        limit: Int?, in transaction: ReadTransaction, store: Store, order: (RecordValue, [UInt8]) throws -> [UInt8]?
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
