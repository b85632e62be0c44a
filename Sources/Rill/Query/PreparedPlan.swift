import Foundation
import RillLocks

/// The plan that fetches of one prepared translation share (see `PreparedTranslation`), as a
/// prepared statement keeps its plan: which index, and which of the predicate's conjuncts give
/// its ranges. Each fetch makes the ranges of its own values (`QueryPlanner.bind`).
///
/// Kept only for plans of index ranges chosen on the predicate's structure alone: not when the
/// planner counted keys to choose (ranges against a walk in the sort's order, which depends on
/// the values), nor when a conjunct of a condition's form gave none for its values (a NaN: a
/// number in its place would serve), nor for scans, unions and walks of a whole index. Held for
/// one entity, sort and presence of a limit at a time, the last planned: a fetch of another
/// store or sort plans anew.
package final class PreparedPlan: Sendable {
    /// A kept plan: its index and walk, and which conjuncts give its range (`QueryPlanner.bind`).
    final class Shape: Sendable {
        let entity: EntityStorage
        let sort: [QuerySortKey]
        let hasLimit: Bool
        let index: IndexStorage
        /// The conjuncts that give the range: an equality for each of the first `equalities`
        /// fields of the index, then the comparisons that bound the next, in `rangeBounds`.
        let positions: [Int]
        let equalities: Int
        let rangeBounds: (lower: UInt8, upper: UInt8)?
        let conjunctCount: Int
        /// Whether `positions` are those of every conjunct.
        let usesEveryConjunct: Bool
        let walk: QueryPlan.Walk
        let isSorted: Bool

        init(
            entity: EntityStorage, sort: [QuerySortKey], hasLimit: Bool, index: IndexStorage, positions: [Int],
            equalities: Int, rangeBounds: (lower: UInt8, upper: UInt8)?, conjunctCount: Int, walk: QueryPlan.Walk,
            isSorted: Bool
        ) {
            self.entity = entity
            self.sort = sort
            self.hasLimit = hasLimit
            self.index = index
            self.positions = positions
            self.equalities = equalities
            self.rangeBounds = rangeBounds
            self.conjunctCount = conjunctCount
            usesEveryConjunct = Set(positions).count == conjunctCount
            self.walk = walk
            self.isSorted = isSorted
        }
    }

    /// Where a fetch of a prepared `#Predicate` finds each conjunct's comparison among its
    /// captured values, when the conjunct is a comparison of a field with one captured value
    /// (`field op value`); nil for other conjuncts. Empty for the plans of text queries.
    struct Operand: Sendable {
        let comparison: QueryComparison
        /// The value's place in the values a fetch binds (`PreparedTranslation.Leaves.values`).
        let leaf: Int
    }

    private let kept = Lock<Shape?>(nil)
    /// Each conjunct's `Operand`, in the order of the translation's conjuncts.
    let operands: [Operand?]

    package init() { operands = [] }

    /// The plan of a prepared translation whose conjuncts compare as `operands` say.
    init(operands: [Operand?]) { self.operands = operands }

    /// The shape kept for plans of `entity` with `sort`, if that is the one kept.
    func shape(for entity: EntityStorage, sort: [QuerySortKey], hasLimit: Bool) -> Shape? {
        guard let shape = kept.withLock({ $0 }), shape.hasLimit == hasLimit, shape.entity == entity,
            shape.sort == sort
        else { return nil }
        return shape
    }

    func keep(_ shape: Shape) {
        kept.withLock { $0 = shape }
    }

    /// The one index range a fetch or text query reads whole, when the shape kept for `entity`,
    /// `sort` and `hasLimit` is exactly its predicate and reads in its order (see
    /// `QueryExecutor.exactRangeModels`): every one of its `conjunctCount` conjuncts a comparison
    /// the range takes, no value cut to a prefix, one range, read forward or (`backward`) over
    /// all the index's fields in reverse. `comparison` gives the `field op value` of the conjunct
    /// at a position. Nil otherwise: the fetch is then planned as any other.
    func exactRead(
        entity: EntityStorage, sort: [QuerySortKey], hasLimit: Bool, conjunctCount: Int,
        _ comparison: (_ position: Int) -> (QueryComparison, RecordValue)?
    ) -> (index: IndexStorage, range: KeyRange, backward: Bool)? {
        guard let shape = shape(for: entity, sort: sort, hasLimit: hasLimit), shape.isSorted,
            shape.usesEveryConjunct, conjunctCount == shape.conjunctCount,
            let backward = Store.exactRangeDirection(shape.walk, shape.index),
            let (ranges, exact) = QueryPlanner.keyRanges(of: shape, { comparison(shape.positions[$0]) }),
            exact, ranges.count == 1
        else { return nil }
        return (shape.index, ranges[0], backward)
    }
}
