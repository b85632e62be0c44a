import Foundation

/// One run of a query over the stored records, shared by typed fetches (`QueryExecutor`) and
/// text queries (`Store.run(_:forceScan:in:)`): the plan, the read of its candidates, and the
/// test of each candidate on its stored record.
///
/// Each caller makes its own rows of the matches (decoded models checked by their `Predicate`, or
/// schema-less records) and collects them with a `QueryRows`, which orders them and cuts the
/// window. The storage is reached only through `Store.forEachCandidate` and
/// `Store.countKeys` (see `Store+QueryCandidates.swift`).
///
/// A class: a struct of this many fields is copied and destroyed through the value witnesses of
/// its optional, field by field, several times a fetch (about a tenth of a one-row fetch).
final class QueryExecution {
    let store: Store
    /// The entity as the store describes it now (with all its indexes).
    let entity: EntityStorage
    let plan: QueryPlan
    /// Decides each candidate on its stored record before a row is made of it: the predicate
    /// when it is known exactly in Rill's query form. When it is not known exactly (the caller
    /// tests its rows), the required test, if any. Nil when there is neither, or when the plan's
    /// index ranges are the predicate (every candidate matches).
    let filter: QueryNode?
    /// The predicate is known exactly, and expressed by the plan's index ranges.
    let coversPredicate: Bool
    /// The read transaction to run in; nil for one of its own.
    let transaction: StoreSnapshot?
    /// The top-level fields the filter reads: only those are parsed to test a candidate.
    private let filterFields: Set<String>?
    /// The filter compiled to decide candidates on their stored bytes; the records it cannot
    /// decide are tested as `RecordValue`s. Nil when no part of the filter compiles.
    private let matcher: RecordMatcher?
    /// How records of earlier versions read as the current one, for a schema-less run (text
    /// queries); nil for typed fetches, whose models read through their own evolution.
    private let evolution: RecordEvolution?

    /// Plans a query over `entity`.
    ///
    /// - Parameters:
    ///   - predicate: the condition the plan narrows the candidates with (every match meets it).
    ///   - isExact: whether `predicate` is the whole predicate, which then decides each
    ///     candidate; when false the caller tests its rows itself.
    ///   - sort: the sort as field paths an index may serve; nil for a sort no index order is
    ///     (the candidates then never count as sorted).
    ///   - limit: one past the last result the query keeps, its offset and limit (whether there is
    ///     one decides if an index-order walk pays, and how much it is estimated to read).
    ///   - forceScan: read every record, whatever the indexes (to compare plans).
    ///   - evolution: read each candidate through it (see `RecordEvolution`). A predicate or sort
    ///     on an evolved field is then decided on the evolved records, by a scan: the indexes
    ///     hold the stored values, which a record of an earlier version lacks.
    ///   - required: when `predicate` is not exact, a test each candidate's record must pass
    ///     before the caller sees it (the kind of a family's kind); part of `predicate` already.
    ///   - prepared: the plan shared by the fetches of `predicate`'s prepared translation.
    init(
        store: Store, entity: EntityStorage, predicate: QueryNode?, isExact: Bool, sort: [QuerySortKey]?,
        limit: Int?, forceScan: Bool = false, transaction: StoreSnapshot?, evolution: RecordEvolution? = nil,
        required: QueryNode? = nil, prepared: PreparedPlan? = nil
    ) {
        self.store = store
        self.entity = entity
        self.transaction = transaction
        self.evolution = evolution
        // Only a schema-less run has an evolution: typed fetches make no set of fields here.
        let evolved =
            evolution.map { evolution in
                evolution.touches(Set((sort ?? []).compactMap(\.path.first)))
                    || predicate.map { evolution.touches($0.topLevelFields) } == true
            } ?? false
        var plan =
            forceScan || evolved
            ? QueryPlan(access: .scan, isSorted: sort?.isEmpty ?? false)
            : QueryPlanner.plan(
                predicate, sort: sort ?? [], limit: limit, entity: entity,
                counter: { index, ranges, bound in
                    // A failed count leaves the choice to the ranges, as without one.
                    (try? store.countKeys(of: index, in: ranges, upTo: bound, transaction: transaction)) ?? 0
                }, prepared: prepared)
        if sort == nil { plan.isSorted = false }
        self.plan = plan
        // Index ranges that are exactly the predicate need no test at all.
        coversPredicate = isExact && predicate != nil && plan.coversPredicate
        filter = isExact ? (coversPredicate ? nil : predicate) : required
        filterFields = filter?.topLevelFields
        matcher = filter.flatMap(RecordMatcher.init)
    }

    /// Whether the candidates come in the query's order (identifier order without a sort).
    var isSorted: Bool { plan.isSorted }

    // MARK: - Reading

    /// Calls `body` with the identifier key and stored bytes of each candidate that passes the
    /// filter, in the plan's order; `body` returns false to stop.
    ///
    /// Inlined, as `collect(into:_:)` is: the caller's code for each row then runs in the one
    /// closure the store calls, not through a closure of each layer.
    @inline(__always)
    func forEachMatch(
        _ body: (_ key: UnsafeRawBufferPointer, _ bytes: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        let filter = self.filter
        let fields = filterFields
        let name = entity.name
        let matcher = self.matcher
        let hasFilter = filter != nil
        try RecordMatcher.withProgram(matcher) { program in
            // Out of line, and the only code that binds the filter: a copy of it costs reference
            // counting on every record.
            @inline(never)
            func evaluates(_ key: UnsafeRawBufferPointer, _ bytes: UnsafeRawBufferPointer) throws -> Bool {
                guard let filter else { return true }
                let record = try Store.recordValue(bytes, key: key, entity: name, fields: fields)
                return QueryEvaluator.matches(filter, record)
            }
            @inline(__always)
            func passes(_ key: UnsafeRawBufferPointer, _ bytes: UnsafeRawBufferPointer) throws -> Bool {
                guard hasFilter else { return true }
                switch program?.decide(bytes) ?? .unknown {
                case .yes: return true
                case .no: return false
                case .unknown: return try evaluates(key, bytes)
                }
            }
            if let evolution {
                // Only a record that lacks an evolved field is rebuilt; the others are read as stored.
                try store.forEachCandidate(of: plan, in: entity, transaction: transaction) { key, stored in
                    let evolved = evolution.evolve(stored)
                    return try (evolved ?? []).withUnsafeBytes { rebuilt in
                        let bytes = evolved == nil ? stored : rebuilt
                        guard try passes(key, bytes) else { return true }
                        return try body(key, bytes)
                    }
                }
                return
            }
            guard hasFilter, let program else {
                try store.forEachCandidate(of: plan, in: entity, transaction: transaction) { key, bytes in
                    guard try passes(key, bytes) else { return true }
                    return try body(key, bytes)
                }
                return
            }
            // The program unwrapped once, not for every record: unwrapping the optional copies
            // its fourteen words.
            try store.forEachCandidate(of: plan, in: entity, transaction: transaction) { key, bytes in
                switch program.decide(bytes) {
                case .yes: break
                case .no: return true
                case .unknown: guard try evaluates(key, bytes) else { return true }
                }
                return try body(key, bytes)
            }
        }
    }

    /// Adds to `rows` the row `make` makes of each candidate that passes the filter, in the
    /// plan's order, until `rows` wants no more. (For rows the filter decides alone: a typed
    /// fetch that must test its models calls `forEachMatch` and adds the rows that match.)
    @inline(__always)
    func collect<Row>(
        into rows: inout QueryRows<Row>,
        _ make: (_ key: UnsafeRawBufferPointer, _ bytes: UnsafeRawBufferPointer) throws -> Row
    ) throws {
        guard rows.wantsMore else { return }
        try forEachMatch { key, bytes in rows.add(try make(key, bytes)) }
    }

    /// The number of matches, counted from the index alone, when the plan's index ranges are the
    /// predicate; nil when the records must be read.
    func countWithoutReading() throws -> Int? {
        guard coversPredicate, case .ranges(let index, let ranges, _) = plan.access else { return nil }
        return try store.countKeys(of: index, in: ranges, transaction: transaction)
    }
}
