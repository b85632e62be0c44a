import Foundation

extension QueryPlanner {
    /// The shape of `plan`, made of `best`, to keep for predicates of the structure of
    /// `conjuncts`; nil when it is not one to keep (see `PreparedPlan`): one range (or a range of
    /// dates and the NaN date's), of comparisons with a value, an equality for each of its
    /// index's leading fields it fixes and ranges on the next, and no conjunct of a condition's
    /// form whose values gave none.
    static func shape(
        of plan: QueryPlan, _ best: IndexRanges, _ conjuncts: [QueryNode], entity: EntityStorage,
        sort: [QuerySortKey], limit: Int?
    ) -> PreparedPlan.Shape? {
        guard best.ranges.count <= 2, conjuncts.allSatisfy({ condition($0) != nil || !mayServe($0) }) else {
            return nil
        }
        // The place of each condition used: the first conjunct equal to it is the one the ranges
        // took (they take the first equality on a field, and every range on the next). Two equal
        // conjuncts would be two places of one node, which other values may tell apart.
        var positions: [Int] = []
        for node in best.used {
            guard let position = conjuncts.firstIndex(of: node), !positions.contains(position) else { return nil }
            positions.append(position)
        }
        var rangeBounds: (lower: UInt8, upper: UInt8)?
        for (number, position) in positions.enumerated() {
            guard let (op, value) = comparison(conjuncts[position]) else { return nil }
            if number < best.fixed {
                guard op == .equal else { return nil }
            } else {
                guard op != .equal, op != .notEqual else { return nil }
                rangeBounds = classBounds(value)
            }
        }
        // Two ranges only of dates: those of the dates and the NaN date's (`dateSuffixes`).
        if best.ranges.count == 2 {
            guard let bounds = rangeBounds, bounds == dateBounds,
                best.ranges[1].lower.count >= IndexKey.nanDate.count,
                best.ranges[1].lower.suffix(IndexKey.nanDate.count).elementsEqual(IndexKey.nanDate)
            else { return nil }
        }
        return PreparedPlan.Shape(
            entity: entity, sort: sort, hasLimit: limit != nil, index: best.index,
            positions: positions, equalities: best.fixed, rangeBounds: rangeBounds,
            conjunctCount: conjuncts.count, walk: plan.walk, isSorted: plan.isSorted)
    }

    /// The comparison of a field with a value, as `field op value`.
    static func comparison(_ node: QueryNode) -> (QueryComparison, RecordValue)? {
        switch node {
        case .compare(let op, .field, .literal(let value)):
            return (op, value)
        case .compare(let op, .literal(let value), .field):
            return (op.mirrored, value)
        default:
            return nil
        }
    }

    /// The plan of `shape` for `conjuncts`, which have the structure of those it was made for:
    /// the shape's index, walk and order, and one range made of these conjuncts' values, as
    /// the planner's `ranges(for:_:)` makes it; nil when a value does not key as the shape's did (a NaN, a
    /// value of another class, text that spells a UUID, which is keyed twice), and the
    /// conjuncts are then planned anew.
    ///
    /// The index is not chosen again: with comparisons of the same forms, of values that each
    /// give a condition, the conditions are the same and so is the choice.
    static func bind(_ shape: PreparedPlan.Shape, to conjuncts: [QueryNode]) -> QueryPlan? {
        guard conjuncts.count == shape.conjunctCount else { return nil }
        var used: [QueryNode] = []
        used.reserveCapacity(shape.positions.count)
        let bound = keyRanges(of: shape) { number in
            let node = conjuncts[shape.positions[number]]
            used.append(node)
            return comparison(node)
        }
        guard let (keyRanges, exact) = bound else { return nil }
        var plan = QueryPlan(access: .ranges(shape.index, keyRanges, conditions: used), isSorted: shape.isSorted)
        plan.walk = shape.walk
        if exact {
            plan.coversPredicate = shape.usesEveryConjunct || conjuncts.allSatisfy(used.contains)
        }
        return plan
    }

    /// The key ranges of `shape` for the comparisons `operand` gives, by their number in the
    /// shape's `positions` (the `field op value` of each conjunct the ranges take), and whether
    /// they are exactly those comparisons (no value cut to a prefix); nil when a value does not
    /// key as the shape's did (see `bind(_:to:)`).
    static func keyRanges(
        of shape: PreparedPlan.Shape, _ operand: (_ number: Int) -> (QueryComparison, RecordValue)?
    ) -> (ranges: [KeyRange], exact: Bool)? {
        let positions = shape.positions
        var prefix: [UInt8] = []
        prefix.reserveCapacity(32)
        var exact = true
        let limit = shape.index.payloadLimit
        for number in 0..<shape.equalities {
            guard let (op, value) = operand(number), op == .equal, equates(value), uuidSpelled(by: value) == nil
            else { return nil }
            guard let cut = try? IndexKey.append(value, to: &prefix, payloadLimit: limit) else { return nil }
            if cut { exact = false }
        }
        guard let bounds = shape.rangeBounds else {
            return ([KeyRange(lower: prefix, upper: IndexKey.successor(ofPrefix: prefix))], exact)
        }
        // Every range condition on the field folded into one [lower, upper), as in `ranges(for:_:)`.
        var lowerSuffix = [bounds.lower]
        var upperSuffix = [bounds.upper]
        var nanHolds = true
        for number in shape.equalities..<positions.count {
            guard let (op, value) = operand(number), ranges(value), classBounds(value) == bounds,
                let key = try? IndexKey.key(value)
            else { return nil }
            switch op {
            case .greater, .greaterOrEqual, .less, .lessOrEqual:
                if op == .greater || op == .less { nanHolds = false }
                narrow(
                    &lowerSuffix, &upperSuffix, by: key, below: op == .greater || op == .greaterOrEqual,
                    inclusive: op == .greaterOrEqual || op == .lessOrEqual, classEnd: bounds.upper)
            case .equal, .notEqual:
                return nil
            }
        }
        // Dates are one range, or two when the NaN date is a range of its own (read after the
        // other, in the order of a walk of the index, as the planner reads them). Other values
        // are one range, made as before dates could be two (no array of suffixes on the path of
        // every bound range fetch).
        if bounds == dateBounds {
            let ranges = dateSuffixes(lower: lowerSuffix, upper: upperSuffix, nanHolds: nanHolds).map {
                KeyRange(lower: prefix + $0.lower, upper: prefix + $0.upper)
            }
            return (ranges, exact)
        }
        return ([KeyRange(lower: prefix + lowerSuffix, upper: prefix + upperSuffix)], exact)
    }
}
