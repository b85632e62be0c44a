import Foundation

/// Chooses an index for a query's predicate and sort.
///
/// Only conditions that are part of the predicate's top-level conjunction are used, and the whole
/// predicate is still evaluated on every candidate: an index only narrows the candidates, and it
/// is used only where its key order agrees with the predicate's comparisons, so every matching
/// record is among them.
package enum QueryPlanner {
    /// A condition on one field that an index can serve.
    struct Condition {
        var path: [String]
        /// Equality with any of these values (an `in` list, or one value).
        var values: [RecordValue]?
        var lower: (value: RecordValue, inclusive: Bool)?
        var upper: (value: RecordValue, inclusive: Bool)?
        var node: QueryNode
    }

    /// Counts the keys of `index` in `ranges`, stopping once it reaches `bound`; with nil
    /// ranges, every key of the index (from its statistics, `bound` unused). For the choices
    /// only the data can settle.
    package typealias KeyCounter = (_ index: IndexStorage, _ ranges: [KeyRange]?, _ bound: Int) -> Int

    /// The plan for a query.
    ///
    /// - Parameters:
    ///   - sort: the sort as field paths whose index-key order is the sort's order.
    ///   - limit: one past the last result the query keeps (offset and limit), nil for all.
    ///   - counter: counts index keys, to choose between ranges on one index and a walk of
    ///     another in the sort's order (see `prefersSortWalk`); without it the ranges are used.
    ///   - prepared: the plan of earlier predicates of the same structure (a prepared fetch's),
    ///     read and kept (see `PreparedPlan`).
    package static func plan(
        _ predicate: QueryNode?, sort: [QuerySortKey], limit: Int?, entity: EntityStorage,
        counter: KeyCounter? = nil, prepared: PreparedPlan? = nil
    ) -> QueryPlan {
        let conjuncts = predicate.map(conjuncts) ?? []
        let shape = prepared?.shape(for: entity, sort: sort, hasLimit: limit != nil)
        if let shape, let plan = bind(shape, to: conjuncts) { return plan }
        if let best = bestRanges(for: conjuncts, entity: entity) {
            let plan = rangesPlan(best, sort: sort, conjuncts: conjuncts)
            // A choice the data settles is made for each query.
            let countsKeys = !plan.isSorted && !sort.isEmpty && limit != nil && counter != nil
            if countsKeys, let limit, let counter,
                let walk = sortWalk(for: conjuncts, sort: sort, entity: entity, excluding: best.index),
                let choice = prefersSortWalk(walk, over: best, limit: limit, counter: counter)
            {
                var chosen = walk
                chosen.choice = choice
                return chosen
            }
            if let prepared, !countsKeys,
                let kept = Self.shape(of: plan, best, conjuncts, entity: entity, sort: sort, limit: limit)
            {
                prepared.keep(kept)
            }
            return plan
        }
        // An OR whose every branch an index can serve: the union of those scans.
        for conjunct in conjuncts {
            guard case .or(let branches) = conjunct, branches.count > 1, branches.count <= 16 else { continue }
            let parts = branches.compactMap { bestRanges(for: Self.conjuncts(of: $0), entity: entity) }
            guard parts.count == branches.count else { continue }
            return QueryPlan(access: .union(parts.map { ($0.index, $0.ranges, $0.used) }), isSorted: false)
        }
        // Reading in the index's order pays only when a limit lets the scan stop early.
        if limit != nil, let plan = orderPlan(sort: sort, entity: entity) { return plan }
        return QueryPlan(access: .scan, isSorted: sort.isEmpty)
    }

    /// The plan that reads `best`'s ranges: in the sort's order when they are one range (or
    /// ranges that share their fixed fields, read one after the other) whose walk gives it.
    private static func rangesPlan(_ best: IndexRanges, sort: [QuerySortKey], conjuncts: [QueryNode]) -> QueryPlan {
        // One range that fixes every indexed field walks in identifier order (the key's last
        // part), which is the order of a query without a sort.
        let fixesEveryField = best.fixed == best.index.fieldPaths.count
        let walk: QueryPlan.Walk? =
            best.ranges.count != 1 && !best.sharesPrefix
            ? nil
            : sort.isEmpty ? (fixesEveryField ? QueryPlan.Walk() : nil) : walk(sort, best.index, fixed: best.fixed)
        var plan = QueryPlan(access: .ranges(best.index, best.ranges, conditions: best.used), isSorted: walk != nil)
        plan.walk = walk ?? QueryPlan.Walk()
        if best.exact {
            plan.coversPredicate = conjuncts.allSatisfy(best.used.contains)
        }
        return plan
    }

    /// A walk of the whole of an index in the sort's order: of one whose fields are the sort's
    /// if there is one (its key order is the sort's, ties included), else of one that starts with
    /// them (its ties are put in identifier order as they are read).
    private static func orderPlan(sort: [QuerySortKey], entity: EntityStorage) -> QueryPlan? {
        var found: (index: IndexStorage, walk: QueryPlan.Walk)?
        for index in entity.indexes {
            guard let walk = walk(sort, index, fixed: 0) else { continue }
            if walk.fields == nil || walk.fields == index.fieldPaths.count {
                found = (index, walk)
                break
            }
            if found == nil { found = (index, walk) }
        }
        guard let found else { return nil }
        var plan = QueryPlan(access: .order(found.index), isSorted: true)
        plan.walk = found.walk
        return plan
    }

    /// How walking `index` gives `sort`'s order, ties by identifier, over one key range whose
    /// first `fixed` fields are fixed by equalities (those sort keys are constant there); nil
    /// when it cannot.
    ///
    /// The other sort keys must be the index's next fields, in order, all ascending (the key
    /// order) or all descending (the key order read backwards). When the index has fields after
    /// them, keys that agree on the sort's fields are in the order of those fields, not of
    /// identifiers: the walk puts each such run in identifier order (`QueryPlan.Walk.fields`).
    /// Every field must be one whose index-key order is the sort's: the caller passes only such
    /// sorts (see `QueryExecutor.orderPreservingSortKeys`).
    private static func walk(_ sort: [QuerySortKey], _ index: IndexStorage, fixed: Int) -> QueryPlan.Walk? {
        guard !sort.isEmpty else { return nil }
        let fields = index.fieldPaths
        let fixedPaths = fields.prefix(fixed)
        let rest = sort.filter { !fixedPaths.contains($0.path) }
        // A sort on fixed fields alone orders by identifier: only a range that fixes every field
        // gives that.
        guard let first = rest.first else { return fixed == fields.count ? QueryPlan.Walk() : nil }
        let end = fixed + rest.count
        guard rest.allSatisfy({ $0.ascending == first.ascending }), end <= fields.count,
            fields[fixed..<end].elementsEqual(rest.map(\.path))
        else { return nil }
        return QueryPlan.Walk(reverse: !first.ascending, fields: end)
    }

    // MARK: - Ranges or the sort's order

    /// A plan that reads another index than `excluded` in the sort's order: one range of it for
    /// the conjuncts when its walk gives the order, else the whole index.
    private static func sortWalk(
        for conjuncts: [QueryNode], sort: [QuerySortKey], entity: EntityStorage, excluding excluded: IndexStorage
    ) -> QueryPlan? {
        let conditions = conjuncts.compactMap(condition)
        for index in entity.indexes where index != excluded {
            if let ranges = ranges(for: index, conditions), ranges.ranges.count == 1 {
                let plan = rangesPlan(ranges, sort: sort, conjuncts: conjuncts)
                if plan.isSorted { return plan }
            }
        }
        var plan = orderPlan(sort: sort, entity: entity)
        if case .order(let index)? = plan?.access, index == excluded { plan = nil }
        return plan
    }

    /// Whether a walk in the sort's order, testing each record, beats reading `best`'s ranges
    /// and sorting them, for a query that keeps its first `limit` results; the reason, for
    /// `explain`, when it does.
    ///
    /// Reading the ranges reads each of their `n` records. If the matches are spread through the
    /// sort's order independently of the sort's values, the walk finds its `limit` results
    /// after about `limit × total / n` records, `total` being the records it walks (at most the
    /// index's keys). The two are equal at `n = √(limit × total)`. The walk is chosen only when
    /// `best` holds 4 times that many keys: near the break-even the two cost about the same, the
    /// walk tests a record for each it reads, and matches that cluster at the far end of the sort's
    /// order make it read more than the estimate (at most every record once). Live queries plan
    /// their reads with their lookahead as the limit after every commit that empties a window,
    /// and `rill-bench serve` measured their notifications 3 times slower with the walk chosen at
    /// the break-even (500 keys in the ranges against 447). So `best`'s keys are counted up to
    /// that bound (a walk of index keys alone, cheaper than reading the records it would spare);
    /// the count stops early, so a small range costs a few keys.
    private static func prefersSortWalk(
        _ walk: QueryPlan, over best: IndexRanges, limit: Int, counter: KeyCounter
    ) -> String? {
        let walked: IndexStorage
        switch walk.access {
        case .order(let index), .ranges(let index, _, _): walked = index
        default: return nil
        }
        let total = counter(walked, nil, 0)
        let breakEven = Int(Double(limit).squareRoot() * Double(total).squareRoot())
        let bound = max(2 * limit, 4 * breakEven)
        let count = counter(best.index, best.ranges, bound)
        guard count >= bound else { return nil }
        return "chosen over index (\(best.index.name)): at least \(count) keys in its ranges, "
            + "4 × √(limit \(limit) × \(total) keys) = 4 × \(breakEven), the records the walk is estimated to read"
    }

    /// The key ranges an index offers for a predicate's conjuncts (see `ranges(for:_:)`).
    ///
    /// A struct rather than a tuple: the planner runs for every query, and an optional tuple of
    /// references is copied whole (each of its references retained) wherever one member is read.
    struct IndexRanges {
        let index: IndexStorage
        let ranges: [KeyRange]
        /// Two points for each leading field fixed by equality, one for a range on the next.
        let score: Int
        /// How many leading fields the ranges fix by equality.
        var fixed: Int { score / 2 }
        /// The conditions the ranges serve.
        let used: [QueryNode]
        /// Whether the ranges hold exactly the records that meet `used`.
        let exact: Bool
        /// Whether the ranges share their fixed fields' values and ascend without overlapping
        /// (one range, or a range of dates and the NaN date's): read one after the other, in
        /// order or backwards, they give the index's order as one range would.
        var sharesPrefix = false
    }

    /// The index with the best key ranges for `conjuncts`, if any serves them.
    private static func bestRanges(for conjuncts: [QueryNode], entity: EntityStorage) -> IndexRanges? {
        let conditions = conjuncts.compactMap(condition)
        guard !conditions.isEmpty else { return nil }
        var best: IndexRanges?
        let indexes = entity.indexes
        for position in indexes.indices {
            // Most indexes serve none of a query's conditions: they are passed over before
            // anything is built, or the index copied.
            guard let first = indexes[position].fieldPaths.first, conditions.contains(where: { $0.path == first }),
                let candidate = ranges(for: indexes[position], conditions), candidate.score > (best?.score ?? 0)
            else { continue }
            best = candidate
        }
        return best
    }

    // MARK: - Conditions

    /// The operands of `node`'s top-level conjunction (nested ones flattened), or `node` alone.
    static func conjuncts(of node: QueryNode) -> [QueryNode] {
        guard case .and(let operands) = node else { return [node] }
        // One array for the whole conjunction, not one for each level and operand.
        var conjuncts: [QueryNode] = []
        conjuncts.reserveCapacity(operands.count)
        func append(_ operands: [QueryNode]) {
            for operand in operands {
                if case .and(let nested) = operand { append(nested) } else { conjuncts.append(operand) }
            }
        }
        append(operands)
        return conjuncts
    }

    /// Whether `node` has the form of a condition an index may serve, whatever its values are:
    /// when it gives no condition, its values decided (a NaN, a decimal, text in a range), and
    /// other values of a prepared fetch may give one, so its plan is not kept.
    static func mayServe(_ node: QueryNode) -> Bool {
        switch node {
        case .compare(let op, .field, .literal), .compare(let op, .literal, .field): op != .notEqual
        case .between(.field, .literal, .literal), .field, .isIn(.field, _): true
        default: false
        }
    }

    static func condition(_ node: QueryNode) -> Condition? {
        switch node {
        case .compare(let op, .field(let path), .literal(let value)):
            return condition(path, op, value, node)
        case .compare(let op, .literal(let value), .field(let path)):
            return condition(path, op.mirrored, value, node)
        case .between(.field(let path), .literal(let lower), .literal(let upper)):
            guard ranges(lower), ranges(upper), sameClass(lower, upper) else { return nil }
            return Condition(path: path, lower: (lower, true), upper: (upper, true), node: node)
        case .field(let path):
            // A Bool field used as a condition holds exactly when it is true.
            return Condition(path: path, values: [.bool(true)], node: node)
        case .isIn(.field(let path), let candidates):
            var values: [RecordValue] = []
            for candidate in candidates {
                guard case .literal(let value) = candidate, equates(value) else { return nil }
                values += equalKeys(value)
            }
            guard !values.isEmpty, values.count <= 256 else { return nil }
            return Condition(path: path, values: values, node: node)
        default:
            return nil
        }
    }

    private static func condition(
        _ path: [String], _ op: QueryComparison, _ value: RecordValue, _ node: QueryNode
    ) -> Condition? {
        switch op {
        case .equal: return equates(value) ? Condition(path: path, values: equalKeys(value), node: node) : nil
        case .notEqual: return nil
        case .less: return ranges(value) ? Condition(path: path, upper: (value, false), node: node) : nil
        case .lessOrEqual: return ranges(value) ? Condition(path: path, upper: (value, true), node: node) : nil
        case .greater: return ranges(value) ? Condition(path: path, lower: (value, false), node: node) : nil
        case .greaterOrEqual: return ranges(value) ? Condition(path: path, lower: (value, true), node: node) : nil
        }
    }

    /// The values whose index keys an equality with `value` must look up: a string that spells a
    /// UUID equals that UUID too (as the evaluator compares them), which is keyed apart.
    private static func equalKeys(_ value: RecordValue) -> [RecordValue] {
        if let uuid = uuidSpelled(by: value) { return [value, .uuid(uuid)] }
        return [value]
    }

    /// The UUID a string value spells, which equals it (and is keyed apart); nil for any other.
    static func uuidSpelled(by value: RecordValue) -> UUID? {
        guard case .string(let text) = value else { return nil }
        return UUIDText.uuid(text)
    }

    /// Values whose index-key equality is the predicate's equality.
    static func equates(_ value: RecordValue) -> Bool {
        switch value {
        case .null, .bool, .int, .uint, .string, .uuid: true
        case .date(let d): !d.timeIntervalSinceReferenceDate.isNaN
        case .double(let d): !d.isNaN
        case .float(let f): !f.isNaN
        default: false  // decimals key approximately; URLs, data, arrays and maps are left to the scan
        }
    }

    /// Values whose index-key order is the predicate's order. Strings are excluded: Swift's `<`
    /// departs from the keys' (NFC) order for some strings with combining marks. A NaN date is
    /// in no order, and a range of dates takes the NaN date's key in or out (`dateSuffixes`).
    static func ranges(_ value: RecordValue) -> Bool {
        switch value {
        case .int, .uint, .bool: true
        case .date(let d): !d.timeIntervalSinceReferenceDate.isNaN
        case .double(let d): !d.isNaN
        case .float(let f): !f.isNaN
        default: false
        }
    }

    /// The tag range of the value's class in index keys: ordering comparisons never cross classes.
    /// Numbers end before NaN (`0x25`), which no ordering comparison holds for: an open range
    /// (`price > 10`) must not reach the NaNs that sort after +infinity. Two tags rather than two
    /// arrays: the planner runs for every query.
    static func classBounds(_ value: RecordValue) -> (lower: UInt8, upper: UInt8) {
        switch value {
        case .null: (0x05, 0x06)
        case .bool: (0x10, 0x12)
        case .int, .uint, .float, .double, .decimal: (0x20, 0x25)
        case .string: (0x30, 0x31)
        case .date: (0x50, 0x51)
        case .uuid: (0x60, 0x61)
        default: (0x00, 0xFF)
        }
    }

    private static func sameClass(_ a: RecordValue, _ b: RecordValue) -> Bool { classBounds(a) == classBounds(b) }

    // MARK: - Ranges

    /// The key ranges an index offers for the conditions, a score (two points for each leading
    /// field fixed by equality, one for a range on the next), the conditions used, and whether the
    /// ranges hold exactly the records that meet them: not when an equality's value is a long one,
    /// which keys keep only a prefix of (records with other values that share it are in the range).
    private static func ranges(for index: IndexStorage, _ conditions: [Condition]) -> IndexRanges? {
        // One prefix, the usual case (no `in` list), is extended in place; `prefixes` holds them
        // once an `in` list makes several.
        var prefix: [UInt8] = []
        prefix.reserveCapacity(32)
        var prefixes: [[UInt8]]?
        var score = 0
        var used: [QueryNode] = []
        var exact = true
        // Positions in `conditions`: reading a condition in place copies none of its values.
        var rangeCondition: Int?
        let limit = index.payloadLimit
        for path in index.fieldPaths {
            if let equality = conditions.firstIndex(where: { $0.path == path && $0.values != nil }) {
                if prefixes == nil, let values = conditions[equality].values, values.count == 1 {
                    guard let cut = try? IndexKey.append(values[0], to: &prefix, payloadLimit: limit) else {
                        return nil
                    }
                    if cut { exact = false }
                    score += 2
                    used.append(conditions[equality].node)
                    continue
                }
                var next: [[UInt8]] = []
                for prefix in prefixes ?? [prefix] {
                    for value in conditions[equality].values! {
                        var key = prefix
                        guard let cut = try? IndexKey.append(value, to: &key, payloadLimit: limit) else { return nil }
                        if cut { exact = false }
                        next.append(key)
                    }
                }
                guard next.count <= 256 else { break }
                // Repeated values of an `in` list would read (and count) the same keys twice.
                prefixes = next.count > 1 ? Array(Set(next)) : next
                score += 2
                used.append(conditions[equality].node)
                continue
            }
            rangeCondition = conditions.firstIndex { $0.path == path && ($0.lower != nil || $0.upper != nil) }
            break
        }
        if let range = rangeCondition {
            // Fold every range condition on the field into one [lower, upper).
            let rangePath = conditions[range].path
            let bounds = classBounds((conditions[range].lower ?? conditions[range].upper)!.value)
            var lowerSuffix = [bounds.lower]
            var upperSuffix = [bounds.upper]
            var nanHolds = true
            for condition in conditions where condition.path == rangePath && condition.values == nil {
                guard classBounds((condition.lower ?? condition.upper)!.value) == bounds else { continue }
                if condition.lower?.inclusive == false || condition.upper?.inclusive == false { nanHolds = false }
                if let (value, inclusive) = condition.lower, let key = try? IndexKey.key(value) {
                    narrow(
                        &lowerSuffix, &upperSuffix, by: key, below: true, inclusive: inclusive, classEnd: bounds.upper)
                }
                if let (value, inclusive) = condition.upper, let key = try? IndexKey.key(value) {
                    narrow(
                        &lowerSuffix, &upperSuffix, by: key, below: false, inclusive: inclusive, classEnd: bounds.upper)
                }
                used.append(condition.node)
            }
            score += 1
            let suffixes =
                bounds == dateBounds
                ? dateSuffixes(lower: lowerSuffix, upper: upperSuffix, nanHolds: nanHolds)
                : [(lowerSuffix, upperSuffix)]
            let ranges = (prefixes ?? [prefix]).flatMap { prefix in
                suffixes.map { KeyRange(lower: prefix + $0.lower, upper: prefix + $0.upper) }
            }
            var found = IndexRanges(index: index, ranges: ranges, score: score, used: used, exact: exact)
            found.sharesPrefix = prefixes == nil || prefixes?.count == 1
            return found
        }
        guard score > 0 else { return nil }
        guard let prefixes else {
            // One prefix (an equality, the common case): one range, nothing to sort.
            return IndexRanges(
                index: index, ranges: [KeyRange(lower: prefix, upper: IndexKey.successor(ofPrefix: prefix))],
                score: score, used: used, exact: exact)
        }
        let sorted = prefixes.count > 1 ? prefixes.sorted { $0.lexicographicallyPrecedes($1) } : prefixes
        let ranges = sorted.map { KeyRange(lower: $0, upper: IndexKey.successor(ofPrefix: $0)) }
        return IndexRanges(index: index, ranges: ranges, score: score, used: used, exact: exact)
    }

    /// The tag range of dates in index keys.
    static let dateBounds = classBounds(.date(Date(timeIntervalSinceReferenceDate: 0)))

    /// The suffixes of the ranges of keys of dates in `[lower, upper)`, folded from conditions
    /// that all hold for a NaN date (`nanHolds`: they are all `<=` and `>=`, which `Date`
    /// derives from `<` as `!(b < a)` and `!(a < b)`) or not. A NaN date's key is the last of
    /// the class (`IndexKey.nanDate`), after +infinity's: it is taken out of the range, and put
    /// back, as a range of its own when the range ends before it, when every condition holds.
    static func dateSuffixes(
        lower: [UInt8], upper: [UInt8], nanHolds: Bool
    ) -> [(lower: [UInt8], upper: [UInt8])] {
        let nan = IndexKey.nanDate
        let end = [dateBounds.upper]
        guard nanHolds else { return [(lower, nan.lexicographicallyPrecedes(upper) ? nan : upper)] }
        // A range with no upper bound reaches the NaN date; any other ends before it (its bound
        // is a date's that is not NaN).
        return upper == end ? [(lower, end)] : [(lower, upper), (nan, end)]
    }

    /// Narrows `[lower, upper)`, suffixes of a range of one field's keys in a class of values
    /// whose tags end before `classEnd`, by a bound on the field: `key` from below (`>`, `>=`)
    /// or from above, inclusive or not.
    static func narrow(
        _ lower: inout [UInt8], _ upper: inout [UInt8], by key: [UInt8], below: Bool, inclusive: Bool,
        classEnd: UInt8
    ) {
        if below {
            let candidate = inclusive ? key : (IndexKey.successor(ofPrefix: key) ?? [classEnd])
            if !candidate.lexicographicallyPrecedes(lower) { lower = candidate }
        } else {
            let candidate = inclusive ? (IndexKey.successor(ofPrefix: key) ?? [classEnd]) : key
            if candidate.lexicographicallyPrecedes(upper) { upper = candidate }
        }
    }
}

extension IndexKey {
    /// The encoding of one value.
    static func key(_ value: RecordValue) throws -> [UInt8] {
        var key: [UInt8] = []
        try IndexKey.append(value, to: &key)
        return key
    }
}
