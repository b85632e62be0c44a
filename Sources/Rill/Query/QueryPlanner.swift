import Foundation

/// Chooses an index for a query's predicate and sort.
///
/// Only conditions that are part of the predicate's top-level conjunction are used, and the whole
/// predicate is still evaluated on every candidate: an index only narrows the candidates, and it
/// is used only where its key order agrees with the predicate's comparisons, so every matching
/// record is among them.
package enum QueryPlanner {
    /// A condition on one field that an index can serve.
    private struct Condition {
        var path: [String]
        /// Equality with any of these values (an `in` list, or one value).
        var values: [RecordValue]?
        var lower: (value: RecordValue, inclusive: Bool)?
        var upper: (value: RecordValue, inclusive: Bool)?
        var node: QueryNode
    }

    package static func plan(
        _ predicate: QueryNode?, sort: [QuerySortKey], limit: Int?, entity: EntityStorage
    ) -> QueryPlan {
        let conjuncts = predicate.map(conjuncts) ?? []
        if let best = bestRanges(for: conjuncts, entity: entity) {
            // One range that fixes every indexed field walks in identifier order (the key's last
            // part), which is the order of a query without a sort.
            let fixesEveryField = best.score == 2 * best.index.fieldPaths.count
            let sorted =
                best.ranges.count == 1 && (sort.isEmpty ? fixesEveryField : servesOrder(sort, best.index))
            var plan = QueryPlan(access: .ranges(best.index, best.ranges, conditions: best.used), isSorted: sorted)
            if best.exact {
                plan.coversPredicate = conjuncts.allSatisfy(best.used.contains)
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
        if limit != nil, let index = entity.indexes.first(where: { servesOrder(sort, $0) }) {
            return QueryPlan(access: .order(index), isSorted: true)
        }
        return QueryPlan(access: .scan, isSorted: sort.isEmpty)
    }

    /// Whether walking `index` gives `sort`'s order, ties by identifier: the index's fields are
    /// the sort's, all ascending. (An index with more fields than the sort orders its ties by
    /// the next field, not by identifier.)
    private static func servesOrder(_ sort: [QuerySortKey], _ index: IndexStorage) -> Bool {
        !sort.isEmpty && sort.allSatisfy(\.ascending) && index.fieldPaths == sort.map(\.path)
    }

    /// The key ranges an index offers for a predicate's conjuncts (see `ranges(for:_:)`).
    ///
    /// A struct rather than a tuple: the planner runs for every query, and an optional tuple of
    /// references is copied whole (each of its references retained) wherever one member is read.
    private struct IndexRanges {
        let index: IndexStorage
        let ranges: [KeyRange]
        /// Two points for each leading field fixed by equality, one for a range on the next.
        let score: Int
        /// The conditions the ranges serve.
        let used: [QueryNode]
        /// Whether the ranges hold exactly the records that meet `used`.
        let exact: Bool
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

    private static func conjuncts(of node: QueryNode) -> [QueryNode] {
        if case .and(let operands) = node { return operands.flatMap(conjuncts) }
        return [node]
    }

    private static func condition(_ node: QueryNode) -> Condition? {
        switch node {
        case .compare(let op, .field(let path), .literal(let value)):
            return condition(path, op, value, node)
        case .compare(let op, .literal(let value), .field(let path)):
            let mirrored: QueryComparison =
                switch op {
                case .less: .greater
                case .lessOrEqual: .greaterOrEqual
                case .greater: .less
                case .greaterOrEqual: .lessOrEqual
                case .equal, .notEqual: op
                }
            return condition(path, mirrored, value, node)
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
        if case .string(let text) = value, let uuid = UUID(uuidString: text) { return [value, .uuid(uuid)] }
        return [value]
    }

    /// Values whose index-key equality is the predicate's equality.
    private static func equates(_ value: RecordValue) -> Bool {
        switch value {
        case .null, .bool, .int, .uint, .string, .date, .uuid: true
        case .double(let d): !d.isNaN
        case .float(let f): !f.isNaN
        default: false  // decimals key approximately; URLs, data, arrays and maps are left to the scan
        }
    }

    /// Values whose index-key order is the predicate's order. Strings are excluded: Swift's `<`
    /// departs from the keys' (NFC) order for some strings with combining marks.
    private static func ranges(_ value: RecordValue) -> Bool {
        switch value {
        case .int, .uint, .date, .bool: true
        case .double(let d): !d.isNaN
        case .float(let f): !f.isNaN
        default: false
        }
    }

    /// The tag range of the value's class in index keys: ordering comparisons never cross classes.
    /// Numbers end before NaN (`0x25`), which no ordering comparison holds for: an open range
    /// (`price > 10`) must not reach the NaNs that sort after +infinity.
    private static func classBounds(_ value: RecordValue) -> (lower: [UInt8], upper: [UInt8]) {
        switch value {
        case .null: ([0x05], [0x06])
        case .bool: ([0x10], [0x12])
        case .int, .uint, .float, .double, .decimal: ([0x20], [0x25])
        case .string: ([0x30], [0x31])
        case .date: ([0x50], [0x51])
        case .uuid: ([0x60], [0x61])
        default: ([0x00], [0xFF])
        }
    }

    private static func sameClass(_ a: RecordValue, _ b: RecordValue) -> Bool { classBounds(a) == classBounds(b) }

    // MARK: - Ranges

    /// The key ranges an index offers for the conditions, a score (two points for each leading
    /// field fixed by equality, one for a range on the next), the conditions used, and whether the
    /// ranges hold exactly the records that meet them: not when an equality's value is a long one,
    /// which keys keep only a prefix of (records with other values that share it are in the range).
    private static func ranges(for index: IndexStorage, _ conditions: [Condition]) -> IndexRanges? {
        var prefixes: [[UInt8]] = [[]]
        var score = 0
        var used: [QueryNode] = []
        var exact = true
        // Positions in `conditions`: reading a condition in place copies none of its values.
        var rangeCondition: Int?
        let limit = index.payloadLimit
        for path in index.fieldPaths {
            if let equality = conditions.firstIndex(where: { $0.path == path && $0.values != nil }) {
                var next: [[UInt8]] = []
                for prefix in prefixes {
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
            var lowerSuffix = bounds.lower
            var upperSuffix = bounds.upper
            for condition in conditions where condition.path == rangePath && condition.values == nil {
                guard classBounds((condition.lower ?? condition.upper)!.value) == bounds else { continue }
                if let (value, inclusive) = condition.lower, let key = try? IndexKey.key(value) {
                    let candidate = inclusive ? key : (IndexKey.successor(ofPrefix: key) ?? bounds.upper)
                    if candidate.lexicographicallyPrecedes(lowerSuffix) == false { lowerSuffix = candidate }
                }
                if let (value, inclusive) = condition.upper, let key = try? IndexKey.key(value) {
                    let candidate = inclusive ? (IndexKey.successor(ofPrefix: key) ?? bounds.upper) : key
                    if candidate.lexicographicallyPrecedes(upperSuffix) { upperSuffix = candidate }
                }
                used.append(condition.node)
            }
            score += 1
            let ranges = prefixes.map { KeyRange(lower: $0 + lowerSuffix, upper: $0 + upperSuffix) }
            return IndexRanges(index: index, ranges: ranges, score: score, used: used, exact: exact)
        }
        guard score > 0 else { return nil }
        // One prefix (an equality, the common case) needs no sorting.
        let sorted = prefixes.count > 1 ? prefixes.sorted { $0.lexicographicallyPrecedes($1) } : prefixes
        let ranges = sorted.map { KeyRange(lower: $0, upper: IndexKey.successor(ofPrefix: $0)) }
        return IndexRanges(index: index, ranges: ranges, score: score, used: used, exact: exact)
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
